/*
 * bench.c: attnscope's measurements (tests/bench/run prints them as a table).
 *
 *   bench probe             peak fused multiply-add rate of one core, and of
 *                           every thread ATTNSCOPE_THREADS allows at once
 *   bench forward N REPS    the core forward (mha, causal, d 768, 12 heads),
 *                           every stage kept, and its matrix products alone
 *   bench rss N             one pipeline in a fresh process: peak RSS and the
 *                           bytes of the kept stage buffers
 *   bench frame REPS        keystroke to frame in the interactive view on a
 *                           200x60 screen, and the bytes sent to the terminal
 *   bench load NAME PATH REPS  opening a model's weights (a folder or a file)
 *   bench spawn REPS CMD..  wall time of running a command
 *   bench gpt2 N REPS       GPT-2 small's forward (12 layers, d 768, 12 heads,
 *                           vocabulary 50,257) over N tokens, random weights,
 *                           what a run keeps (every layer's keys, values and
 *                           output, the first layer's every stage), top 5
 *                           next tokens per position; a fifth column: the
 *                           process's median CPU time
 *   bench gpt2-edit N REPS  the same model: a token appended to N tokens as
 *                           the view appends it (decoder_forward_from in the
 *                           shown run's memory, then the shown layer's
 *                           scores and weights made); a fifth column: the
 *                           forward's part alone
 *   bench gpt2-view DIR N REPS  the interactive view on the model in DIR
 *                           (a GPT-2 folder: bench gpt2-folder), a text of
 *                           about N tokens: a word appended (e, End, the
 *                           word, Enter) to the new frame on a 200x50
 *                           screen, on the stage screen at the weights;
 *                           then a head ablated or brought back (a) on the
 *                           last layer and on the first, to the new frame
 *   bench llama-folder DIR SHAPE  a folder of random BF16 weights in a real
 *                           model's shapes (smollm2-135m, smollm2-360m,
 *                           qwen2.5-0.5b, qwen3-0.6b, llama3.2-1b,
 *                           llama3.2-3b, llama3.1-8b: tests/llama_random.h)
 *   bench llama DIR N REPS  the forward of the Llama-style model in DIR over
 *                           N tokens, packed as the view packs it, top 5;
 *                           a fifth column: the median CPU time
 *   bench llama-open DIR view|print N  opening it as the view does (packed
 *                           a layer at a time) or as --print does, one
 *                           forward of N tokens: seconds, the weights'
 *                           bytes, peak and steady resident set
 *   (BENCH_F32=1 with llama or llama-open: the bfloat16 matrices widened
 *   to float32 copies first, as attnscope kept them before)
 * Every timing line is "name<TAB>median_ms<TAB>min_ms<TAB>max_ms[<TAB>...]".
 * Not a test: timings belong in doc/performance.md, not in make check.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

#include "attnscope/kernels/cpu.h"
#include "attnscope/files/tensor.h"
#include "attnscope/families/decoder/family_decoder.h"
#include "attnscope/architectures/gpt2.h"
#include "attnscope/families/decoder/model.h"
#include "../gpt2_random.h"
#include "../llama_random.h"
#include "attnscope/architectures/llama.h"
#include "attnscope/kernels/linalg.h"
#include "attnscope/kernels/parallel.h"
#include "attnscope/pipeline/pipeline.h"
#include "front/app/app.h"
#include "tui/tui.h"

#define D_MODEL 768
#define HEADS 12
#define MAX_REPS 101

static double
now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* The CPU time of the whole process (every thread), in seconds. */
static double
cpu_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int
cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a;
    double y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Prints "name median min max" in milliseconds, then extra. */
static void
report(const char *name, double *t, int n, const char *extra)
{
    qsort(t, (size_t)n, sizeof *t, cmp_double);
    printf("%s\t%.3f\t%.3f\t%.3f%s%s\n", name, t[n / 2] * 1e3, t[0] * 1e3, t[n - 1] * 1e3,
           extra ? "\t" : "", extra ? extra : "");
}

/* ------------------------------------------------------------------ probe */

#if defined(__x86_64__) && defined(__GNUC__)
#define CHAINS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)
__attribute__((target("avx512f"))) static float
probe512(long iters)
{
    __m512 b = _mm512_set1_ps(1.0000001f);
    __m512 c = _mm512_set1_ps(1e-7f);
#define DECL(i) __m512 a##i = _mm512_set1_ps((float)i);
    CHAINS(DECL)
#undef DECL
    for (long it = 0; it < iters; it++) {
#define FMA(i) a##i = _mm512_fmadd_ps(a##i, b, c);
        CHAINS(FMA)
#undef FMA
    }
    __m512 s = a0;
#define ADD(i) s = _mm512_add_ps(s, a##i);
    CHAINS(ADD)
#undef ADD
    return _mm512_reduce_add_ps(s);
}

__attribute__((target("avx2,fma"))) static float
probe256(long iters)
{
    __m256 b = _mm256_set1_ps(1.0000001f);
    __m256 c = _mm256_set1_ps(1e-7f);
    float out[8];
#define DECL(i) __m256 a##i = _mm256_set1_ps((float)i);
    CHAINS(DECL)
#undef DECL
    for (long it = 0; it < iters; it++) {
#define FMA(i) a##i = _mm256_fmadd_ps(a##i, b, c);
        CHAINS(FMA)
#undef FMA
    }
    __m256 s = a0;
#define ADD(i) s = _mm256_add_ps(s, a##i);
    CHAINS(ADD)
#undef ADD
    _mm256_storeu_ps(out, s);
    return out[0];
}
#endif

/* The widest FMAs on one thread, for probe_threads. */
static void *
probe_thread(void *arg)
{
    const long iters = *(const long *)arg;
    static volatile float sink;

    if (__builtin_cpu_supports("avx512f"))
        sink = probe512(iters);
    else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        sink = probe256(iters);
    (void)sink;
    return NULL;
}

/* The same loop on parallel_threads() threads at once: the machine's peak, not one core's. */
static void
probe_threads(void)
{
    const int threads = parallel_threads();
    const int width = __builtin_cpu_supports("avx512f") ? 16
                      : __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") ? 8
                                                                                          : 0;
    long iters = 100000000;
    pthread_t tid[PARALLEL_MAX_THREADS];
    double t;

    if (width == 0)
        return;
    t = now();
    for (int i = 1; i < threads; i++)
        pthread_create(&tid[i], NULL, probe_thread, &iters);
    probe_thread(&iters);
    for (int i = 1; i < threads; i++)
        pthread_join(tid[i], NULL);
    t = now() - t;
    printf("peak_threads\t%d\n", threads);
    printf("peak_all_gflops\t%.1f\n", (double)threads * iters * 12 * width * 2 / t / 1e9);
}

static int
cmd_probe(void)
{
#if defined(__x86_64__) && defined(__GNUC__)
    const long iters = 100000000;
    double t;
    volatile float sink;

    if (__builtin_cpu_supports("avx512f")) {
        t = now();
        sink = probe512(iters);
        t = now() - t;
        printf("peak_avx512_gflops\t%.1f\n", (double)iters * 12 * 16 * 2 / t / 1e9);
    }
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
        t = now();
        sink = probe256(iters);
        t = now() - t;
        printf("peak_avx2_gflops\t%.1f\n", (double)iters * 12 * 8 * 2 / t / 1e9);
    }
    (void)sink;
    probe_threads();
#endif
    printf("kernels\t%s\n", cpu_isa_name());
    return 0;
}

/* ------------------------------------------------------------ fixtures */

/* A 768-wide vocabulary of 50 tokens t0..t49 with fixed values, in a file. */
static int
make_vocab(struct vocab *v, struct attn_error *err)
{
    char path[256];
    const char *tmp = getenv("TMPDIR");
    FILE *f;

    snprintf(path, sizeof path, "%s/attnscope-bench-vocab-%d.csv", tmp ? tmp : "/tmp", (int)getpid());
    f = fopen(path, "w");
    if (f == NULL)
        return -1;
    for (int w = 0; w < 50; w++) {
        fprintf(f, "t%d", w);
        for (int j = 0; j < D_MODEL; j++)
            fprintf(f, ",%.4f", ((w * 31 + j * 17) % 200) / 100.0 - 1.0);
        fputc('\n', f);
    }
    fclose(f);
    if (vocab_load_csv(v, path, err) != ATTN_OK) {
        unlink(path);
        return -1;
    }
    unlink(path);
    return 0;
}

static char *
make_sentence(int n)
{
    char *s = malloc((size_t)n * 5 + 1);
    size_t len = 0;

    if (s == NULL)
        return NULL;
    for (int i = 0; i < n; i++)
        len += (size_t)sprintf(s + len, "%st%d", i ? " " : "", i % 50);
    return s;
}

static void
gpt2_config(struct attention_config *c)
{
    attention_config_init(c);
    c->d_out = D_MODEL;
    c->heads = HEADS;
}

/* ---------------------------------------------------------------- forward */

static int
cmd_forward(int n, int reps)
{
    struct vocab v;
    struct attn_error err;
    struct attention_config cfg;
    struct pipeline p;
    struct pipeline_source src;
    char *sentence = make_sentence(n);
    double total[MAX_REPS];
    double mm[MAX_REPS];
    char extra[128];
    /* Multiply-adds: Q, K, V and out_proj; Q K^T; under the causal mask
     * attnscope multiplies only the lower triangle of weights by V (rounded
     * up to its 64-row blocks), PyTorch all of it: count PyTorch's. */
    const double flops = 4.0 * 2 * n * D_MODEL * (double)D_MODEL + HEADS * 2.0 * n * (double)n * 64 * 2;
    const double mm_flops = 4.0 * 2 * n * D_MODEL * (double)D_MODEL;

    if (reps > MAX_REPS)
        reps = MAX_REPS;
    if (sentence == NULL || make_vocab(&v, &err) != 0)
        return 1;
    gpt2_config(&cfg);
    src.sentence = sentence;
    src.vocab = &v;
    src.weights = NULL;
    src.qkv = NULL;
    src.family = NULL;
    if (pipeline_create(&p, &cfg, &src, &err) != ATTN_OK) {
        fprintf(stderr, "bench: %s\n", err.msg);
        return 1;
    }
    for (int r = 0; r < reps; r++) {
        struct rng rr = p.rng_after_params;
        double t0 = now();
        attention_project(&p.st, &cfg, &p.inputs, &p.inputs, &p.params);
        attention_attend(&p.st, &cfg, &p.params, &rr);
        total[r] = now() - t0;
    }
    /* The four d x d products alone, the biggest matrix multiply of the forward. */
    for (int r = 0; r < reps; r++) {
        double t0 = now();
        for (int w = 0; w < 4; w++)
            linalg_gemm_packed(n, p.inputs.data, D_MODEL, &p.params.p[w].packed,
                               p.st.output.data, D_MODEL);
        mm[r] = now() - t0;
    }
    qsort(total, (size_t)reps, sizeof total[0], cmp_double);
    qsort(mm, (size_t)reps, sizeof mm[0], cmp_double);
    snprintf(extra, sizeof extra, "%.1f\t%.1f", flops / total[reps / 2] / 1e9,
             mm_flops / mm[reps / 2] / 1e9);
    {
        char name[32];
        snprintf(name, sizeof name, "forward_%d", n);
        report(name, total, reps, extra);
    }
    pipeline_destroy(&p);
    vocab_destroy(&v);
    free(sentence);
    return 0;
}

/* -------------------------------------------------------------------- rss */

static int
cmd_rss(int n)
{
    struct vocab v;
    struct attn_error err;
    struct attention_config cfg;
    struct pipeline p;
    struct pipeline_source src;
    struct rusage ru;
    char *sentence = make_sentence(n);

    if (sentence == NULL || make_vocab(&v, &err) != 0)
        return 1;
    gpt2_config(&cfg);
    src.sentence = sentence;
    src.vocab = &v;
    src.weights = NULL;
    src.qkv = NULL;
    src.family = NULL;
    if (pipeline_create(&p, &cfg, &src, &err) != ATTN_OK) {
        fprintf(stderr, "bench: %s\n", err.msg);
        return 1;
    }
    getrusage(RUSAGE_SELF, &ru);
    printf("rss_%d\t%ld\t%zu\n", n, ru.ru_maxrss * 1024L, p.st.arena_bytes);
    pipeline_destroy(&p);
    vocab_destroy(&v);
    free(sentence);
    return 0;
}

/* ------------------------------------------------------------------ frame */

struct frame_case {
    const char *name;
    int n;            /* tokens; 0: the book's sentence and defaults */
    bool grid;
};

static long
out_bytes(FILE *out)
{
    fflush(out);
    return ftell(out);
}

/* The time from key to a finished frame, reps times; keys alternate so the state stays alike. */
static void
time_keys(const char *label, struct tui *t, struct app *a, const int *keys, int nkeys, int reps)
{
    double times[MAX_REPS];

    for (int r = 0; r < reps; r++) {
        double t0 = now();
        app_key(a, keys[r % nkeys]);
        tui_frame(t, a);
        times[r] = now() - t0;
    }
    report(label, times, reps, NULL);
}

/* The view on src, drawing into out (the terminal's size from COLUMNS and LINES); NULL: said. */
static struct tui *
open_view(struct app *a, const struct attention_config *cfg, const struct pipeline_source *src,
          FILE *in, FILE *out)
{
    struct attn_error err;
    struct tui *t;

    if (app_init(a, cfg, src, NULL, &err) != ATTN_OK) {
        fprintf(stderr, "bench: %s\n", err.msg);
        return NULL;
    }
    t = tui_open(out, in, false, a, &err);
    if (t == NULL)
        fprintf(stderr, "bench: %s\n", err.msg);
    return t;
}

static int
cmd_frame(int reps)
{
    static const struct frame_case cases[] = {
        { "book", 0, false },
        { "n64", 64, false },
        { "n64_grid", 64, true },
        { "n256", 256, false },
        { "n256_grid", 256, true },
    };
    struct vocab book;
    struct vocab wide;
    struct attn_error err;
    FILE *in = fopen("/dev/null", "r");
    FILE *out = tmpfile();

    if (reps > MAX_REPS)
        reps = MAX_REPS;
    if (in == NULL || out == NULL || vocab_builtin(&book, &err) != ATTN_OK || make_vocab(&wide, &err) != 0)
        return 1;
    setenv("COLUMNS", "200", 1);
    setenv("LINES", "60", 1);
    setenv("TERM", "xterm-256color", 1);
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const struct frame_case *fc = &cases[c];
        struct attention_config cfg;
        struct pipeline_source src;
        char *sentence = fc->n ? make_sentence(fc->n) : NULL;
        struct app a;
        struct tui *t;
        char label[64];
        long before;

        attention_config_init(&cfg);
        if (fc->n)
            gpt2_config(&cfg);
        src.sentence = sentence ? sentence : "Your journey starts with one step";
        src.vocab = fc->n ? &wide : &book;
        src.weights = NULL;
        src.qkv = NULL;
        src.family = NULL;
        t = open_view(&a, &cfg, &src, in, out);
        if (t == NULL)
            return 1;
        app_key(&a, '6'); /* the weights */
        if (fc->grid)
            app_key(&a, 'g');
        tui_frame(t, &a);

        {
            static const int cursor[] = { APP_KEY_RIGHT, APP_KEY_DOWN, APP_KEY_LEFT, APP_KEY_UP };
            static const int stage[] = { ' ', 'p' };
            static const int seed[] = { 's', 'S' };
            static const int mask[] = { 'm' };
            static const int temp[] = { '>', '<' };
            static const int drop[] = { 'o', 'O' };
            snprintf(label, sizeof label, "frame_%s_cursor", fc->name);
            time_keys(label, t, &a, cursor, 4, reps);
            snprintf(label, sizeof label, "frame_%s_stage", fc->name);
            time_keys(label, t, &a, stage, 2, reps);
            snprintf(label, sizeof label, "frame_%s_seed", fc->name);
            time_keys(label, t, &a, seed, 2, reps);
            snprintf(label, sizeof label, "frame_%s_mask", fc->name);
            time_keys(label, t, &a, mask, 1, reps);
            snprintf(label, sizeof label, "frame_%s_temperature", fc->name);
            time_keys(label, t, &a, temp, 2, reps);
            snprintf(label, sizeof label, "frame_%s_dropout", fc->name);
            time_keys(label, t, &a, drop, 2, reps);
        }
        {
            /* A sentence edit: e, the last character deleted and typed again, Enter. */
            double times[MAX_REPS];
            for (int r = 0; r < reps; r++) {
                double t0;
                const char *s = a.sentence;
                int last = (unsigned char)s[strlen(s) - 1];
                app_key(&a, 'e');
                app_key(&a, APP_KEY_BACKSPACE);
                app_key(&a, last);
                t0 = now();
                app_key(&a, APP_KEY_ENTER);
                tui_frame(t, &a);
                times[r] = now() - t0;
            }
            snprintf(label, sizeof label, "frame_%s_sentence", fc->name);
            report(label, times, reps, NULL);
        }
        /* Bytes sent for one cursor move and for one stage change. */
        before = out_bytes(out);
        app_key(&a, APP_KEY_RIGHT);
        tui_frame(t, &a);
        printf("bytes_%s_cursor\t%ld\n", fc->name, out_bytes(out) - before);
        before = out_bytes(out);
        app_key(&a, ' ');
        tui_frame(t, &a);
        printf("bytes_%s_stage\t%ld\n", fc->name, out_bytes(out) - before);
        tui_close(t);
        app_destroy(&a);
        free(sentence);
    }
    vocab_destroy(&book);
    vocab_destroy(&wide);
    fclose(in);
    fclose(out);
    return 0;
}

/* ------------------------------------------------------------------ spawn */

static int
cmd_spawn(const char *name, int reps, char **argv)
{
    double times[MAX_REPS];

    if (reps > MAX_REPS)
        reps = MAX_REPS;
    for (int r = 0; r < reps; r++) {
        double t0 = now();
        pid_t pid = fork();
        int status;
        if (pid == 0) {
            FILE *null = freopen("/dev/null", "w", stdout);
            (void)null;
            execvp(argv[0], argv);
            _exit(127);
        }
        if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            fprintf(stderr, "bench: %s failed\n", argv[0]);
            return 1;
        }
        times[r] = now() - t0;
    }
    report(name, times, reps, NULL);
    {
        /* The largest of the children's peak memory (Linux gives KiB). */
        struct rusage ru;
        if (getrusage(RUSAGE_CHILDREN, &ru) == 0)
            printf("%s_maxrss\t%ld\n", name, ru.ru_maxrss * 1024L);
    }
    return 0;
}

/* ------------------------------------------------------------------- load */

/*
 * Opening a model's weights (architecture_load: the files read, checked and
 * converted into the model's own memory), a folder or a weights file,
 * reps times; the peak memory is a fresh process's (spawn it with reps 1).
 */
static int
cmd_load(const char *name, const char *path, int reps)
{
    double times[MAX_REPS];
    struct stat sb;
    char dir[4096];
    struct arch_options o = { NULL, 0 };

    if (reps > MAX_REPS)
        reps = MAX_REPS;
    snprintf(dir, sizeof dir, "%s", path);
    if (stat(path, &sb) == 0 && S_ISREG(sb.st_mode)) {
        char *slash = strrchr(dir, '/');
        o.weights = path;
        if (slash != NULL)
            *slash = '\0';
        else
            snprintf(dir, sizeof dir, ".");
    }
    for (int r = 0; r < reps; r++) {
        struct decoder_model m;
        struct attn_error err;
        double t0 = now();
        if (architecture_load(&m, dir, &o, &err) != ATTN_OK) {
            fprintf(stderr, "bench: %s\n", err.msg);
            return 1;
        }
        times[r] = now() - t0;
        decoder_destroy(&m);
    }
    report(name, times, reps, NULL);
    return 0;
}

/* ------------------------------------------------------------------- gpt2 */

/* GPT-2 small's shapes, for every GPT-2 measurement here. */
static const struct decoder_config gpt2_small = {
    .n_layer = 12, .n_head = 12, .n_embd = 768, .n_positions = 1024, .vocab_size = 50257,
    .n_inner = 4 * 768, .eps = 1e-5f, .scale_attn_weights = true, .scale_by_layer = false,
    .tied = true,
};

/*
 * A GPT-2 small folder of random weights, as Hugging Face lays it out, for
 * timing attnscope --model as a whole process.  The tokenizer files are the
 * caller's to add (GPT-2's real ones: samples/tokenizers/gpt2).
 */
static int
cmd_gpt2_folder(const char *dir)
{
    return gpt2_random_folder(dir, &gpt2_small, 0.1f, 1, NULL) == 0 ? 0 : 1;
}

static int
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
        t0 = now();
        c0 = cpu_now();
        if (decoder_forward(&m, ids, n, getenv("BENCH_TOP") ? atoi(getenv("BENCH_TOP")) : 5, NULL, &run, &err) != ATTN_OK) {
            fprintf(stderr, "bench: %s\n", err.msg);
            return 1;
        }
        times[r] = now() - t0;
        cpu[r] = cpu_now() - c0;
        decoder_run_destroy(&run);
        free(ids);
    }
    {
        char name[32];
        char extra[32];
        qsort(cpu, (size_t)reps, sizeof *cpu, cmp_double);
        snprintf(name, sizeof name, "gpt2_%d", n);
        snprintf(extra, sizeof extra, "%.3f", cpu[reps / 2] * 1e3);
        report(name, times, reps, extra);
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
static int
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
    if (n < 1 || n + reps > cfg.n_positions)
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
        double t0 = now(), t1;
        if (decoder_forward_from(&m, ids, n + r + 1, 5, NULL, &shown, n + r, &edited, &err) !=
            ATTN_OK) {
            fprintf(stderr, "bench: %s\n", err.msg);
            return 1;
        }
        t1 = now();
        if (decoder_show_layer(&m, &edited, 0, &err) != ATTN_OK) {
            fprintf(stderr, "bench: %s\n", err.msg);
            return 1;
        }
        times[r] = now() - t0;
        core[r] = t1 - t0;
        decoder_run_destroy(&shown); /* empty when the edit took its memory over */
        shown = edited;
    }
    {
        char name[32], extra[32];
        qsort(core, (size_t)reps, sizeof *core, cmp_double);
        snprintf(name, sizeof name, "gpt2_edit_%d", n);
        snprintf(extra, sizeof extra, "%.3f", core[reps / 2] * 1e3);
        report(name, times, reps, extra);
    }
    return 0;
}

/*
 * The view's edit, whole: the keys a user presses to append a word to a
 * long text, the rebuild (tokenizing, the forward from the first changed
 * token, the shown layer's stages), and the frame drawn.  Each repetition
 * appends one more word, so that the run grows as it does in the view.
 */
static int
cmd_gpt2_view(const char *dir, int n, int reps)
{
    static const char words[] = " the quick brown fox jumps over the lazy dog.";
    struct model m;
    struct attention_config cfg;
    struct pipeline_source src;
    struct attn_error err;
    double times[MAX_REPS];
    FILE *in = fopen("/dev/null", "r");
    FILE *out = tmpfile();
    size_t len = 0;
    char *sentence;
    struct app a;
    struct tui *t;

    if (reps > MAX_REPS)
        reps = MAX_REPS;
    if (in == NULL || out == NULL)
        return 1;
    if (model_open(&m, dir, NULL, &err) != ATTN_OK) {
        fprintf(stderr, "bench: %s\n", err.msg);
        return 1;
    }
    (void)family_decoder_pack_if_room(&m.dec); /* as the view does */
    /* Ten tokens a repetition: GPT-2's BPE reads each " word" and the "." as one. */
    sentence = malloc((size_t)n * sizeof words / 10 + sizeof words);
    if (sentence == NULL)
        return 1;
    sentence[0] = '\0';
    while (len + sizeof words <= (size_t)n * (sizeof words - 1) / 10) {
        memcpy(sentence + len, words, sizeof words);
        len += sizeof words - 1;
    }
    setenv("COLUMNS", "200", 1);
    setenv("LINES", "50", 1);
    setenv("TERM", "xterm-256color", 1);
    attention_config_init(&cfg);
    memset(&src, 0, sizeof src);
    src.sentence = sentence;
    src.family = &family_decoder;
    src.model = &m;
    src.top = 5;
    t = open_view(&a, &cfg, &src, in, out);
    if (t == NULL)
        return 1;
    app_key(&a, '6'); /* the weights */
    tui_frame(t, &a);
    printf("gpt2_view_tokens\t%d\n", a.pipe.tokens.count);
    for (int r = 0; r < reps; r++) {
        static const char word[] = " cat";
        double t0;
        app_key(&a, 'e');
        app_key(&a, APP_KEY_END);
        for (const char *c = word; *c != '\0'; c++)
            app_key(&a, (unsigned char)*c);
        t0 = now();
        app_key(&a, APP_KEY_ENTER);
        tui_frame(t, &a);
        times[r] = now() - t0;
    }
    {
        char name[32];
        snprintf(name, sizeof name, "gpt2_view_%d", n);
        report(name, times, reps, NULL);
    }
    printf("gpt2_view_tokens_after\t%d\n", a.pipe.tokens.count);
    /* A head ablated and brought back (a) on the last layer, then on the first. */
    for (int layer = m.dec.cfg.n_layer - 1; layer >= 0; layer -= m.dec.cfg.n_layer - 1) {
        char name[48];
        while (a.pipe.layer != layer) {
            app_key(&a, a.pipe.layer < layer ? '.' : ',');
            tui_frame(t, &a);
        }
        for (int r = 0; r < reps; r++) {
            double t0 = now();
            app_key(&a, 'a');
            tui_frame(t, &a);
            times[r] = now() - t0;
        }
        snprintf(name, sizeof name, "gpt2_view_ablate_layer%d_%d", layer, n);
        report(name, times, reps, NULL);
        if (layer == 0)
            break;
    }
    tui_close(t);
    app_destroy(&a);
    model_close(&m);
    free(sentence);
    fclose(in);
    fclose(out);
    return 0;
}

/* ------------------------------------------------------------------ llama */

static int
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
    const size_t table = (size_t)m->cfg.vocab_size * (size_t)m->cfg.n_embd;

    for (int l = 0; l < m->cfg.n_layer; l++)
        for (int i = 0; i < DECODER_BLOCK_LINEARS; i++) {
            struct decoder_linear *d = decoder_block_linear(&m->blocks[l], i);
            if (d->w16 != NULL)
                d->w = widened(d->w16, (size_t)d->out * (size_t)d->ld), d->w16 = NULL;
        }
    if (m->wte16 != NULL) {
        const bool tied = m->lm_head16 == m->wte16;
        m->wte = widened(m->wte16, table), m->wte16 = NULL;
        if (tied)
            m->lm_head = m->wte, m->lm_head16 = NULL;
    }
    if (m->lm_head16 != NULL)
        m->lm_head = widened(m->lm_head16, table), m->lm_head16 = NULL;
}

/* The Llama-style model in dir into m (its matrices widened under BENCH_F32); 0 or 1. */
static int
open_llama(const char *dir, struct decoder_model *m)
{
    struct attn_error err;

    if (architecture_load(m, dir, &(struct arch_options){ NULL, 0 }, &err) != ATTN_OK) {
        fprintf(stderr, "bench: %s\n", err.msg);
        return 1;
    }
    if (getenv("BENCH_F32") != NULL)
        widen_model(m);
    return 0;
}

static int
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
    if (n < 1 || n > m.cfg.n_positions || (ids = malloc((size_t)n * sizeof *ids)) == NULL)
        return 1;
    for (int i = 0; i < n; i++)
        ids[i] = (i * 7919) % m.cfg.vocab_size;
    for (int r = 0; r < reps; r++) {
        struct decoder_run run;
        const double t0 = now(), c0 = cpu_now();
        if (decoder_forward(&m, ids, n, 5, NULL, &run, &err) != ATTN_OK) {
            fprintf(stderr, "bench: %s\n", err.msg);
            return 1;
        }
        times[r] = now() - t0;
        cpu[r] = cpu_now() - c0;
        decoder_run_destroy(&run);
    }
    {
        char name[96], extra[32];
        qsort(cpu, (size_t)reps, sizeof *cpu, cmp_double);
        snprintf(name, sizeof name, "%s_%d", slash != NULL ? slash + 1 : dir, n);
        snprintf(extra, sizeof extra, "%.3f", cpu[reps / 2] * 1e3);
        report(name, times, reps, extra);
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
static int
cmd_llama_open(const char *dir, const char *mode, int n)
{
    struct decoder_model m;
    struct decoder_run run;
    struct attn_error err;
    const bool view = strcmp(mode, "print") != 0;
    double t0 = now(), t_load, t_pack, t_fwd;
    int *ids;

    if (open_llama(dir, &m) != 0)
        return 1;
    t_load = now() - t0;
    t0 = now();
    if (view && !decoder_pack_replacing(&m))
        fprintf(stderr, "bench: not everything was packed\n");
    t_pack = now() - t0;
    if (n < 1 || n > m.cfg.n_positions || (ids = malloc((size_t)n * sizeof *ids)) == NULL)
        return 1;
    for (int i = 0; i < n; i++)
        ids[i] = (i * 7919) % m.cfg.vocab_size;
    t0 = now();
    if (decoder_forward(&m, ids, n, 5, NULL, &run, &err) != ATTN_OK) {
        fprintf(stderr, "bench: %s\n", err.msg);
        return 1;
    }
    t_fwd = now() - t0;
    printf("open\t%s\t%s\tn %d\tload %.1f s\tpack %.1f s\tforward %.2f s\tweights %zu MiB\t"
           "VmHWM %ld kB\tVmRSS %ld kB\n",
           dir, view ? "view" : "print", n, t_load, t_pack, t_fwd, decoder_weights_bytes(&m) >> 20,
           status_kb("VmHWM:"), status_kb("VmRSS:"));
    decoder_run_destroy(&run);
    free(ids);
    decoder_destroy(&m);
    return 0;
}

int
main(int argc, char **argv)
{
    if (argc >= 4 && strcmp(argv[1], "llama-folder") == 0)
        return cmd_llama_folder(argv[2], argv[3]);
    if (argc >= 5 && strcmp(argv[1], "llama-open") == 0)
        return cmd_llama_open(argv[2], argv[3], atoi(argv[4]));
    if (argc >= 5 && strcmp(argv[1], "llama") == 0)
        return cmd_llama(argv[2], atoi(argv[3]), atoi(argv[4]));
    if (argc >= 5 && strcmp(argv[1], "gpt2-view") == 0)
        return cmd_gpt2_view(argv[2], atoi(argv[3]), atoi(argv[4]));
    if (argc >= 4 && strcmp(argv[1], "gpt2-edit") == 0)
        return cmd_gpt2_edit(atoi(argv[2]), atoi(argv[3]));
    if (argc >= 2 && strcmp(argv[1], "probe") == 0)
        return cmd_probe();
    if (argc >= 4 && strcmp(argv[1], "forward") == 0)
        return cmd_forward(atoi(argv[2]), atoi(argv[3]));
    if (argc >= 3 && strcmp(argv[1], "rss") == 0)
        return cmd_rss(atoi(argv[2]));
    if (argc >= 3 && strcmp(argv[1], "frame") == 0)
        return cmd_frame(atoi(argv[2]));
    if (argc >= 4 && strcmp(argv[1], "gpt2") == 0)
        return cmd_gpt2(atoi(argv[2]), atoi(argv[3]));
    if (argc >= 3 && strcmp(argv[1], "gpt2-bytes") == 0) {
        /* What attnscope --model keeps for n tokens of GPT-2 small (its family's estimate). */
        const size_t n = (size_t)atoi(argv[2]);
        printf("gpt2_bytes_%zu\t%zu\n", n, family_decoder_pipeline_bytes(&gpt2_small, (int)n, 5));
        return 0;
    }
    if (argc >= 3 && strcmp(argv[1], "gpt2-folder") == 0)
        return cmd_gpt2_folder(argv[2]);
    if (argc >= 5 && strcmp(argv[1], "load") == 0)
        return cmd_load(argv[2], argv[3], atoi(argv[4]));
    if (argc >= 5 && strcmp(argv[1], "spawn") == 0)
        return cmd_spawn(argv[2], atoi(argv[3]), argv + 4);
    fprintf(stderr, "usage: bench probe | forward N REPS | rss N | frame REPS | "
                    "gpt2 N REPS | gpt2-edit N REPS | gpt2-folder DIR | gpt2-view DIR N REPS | "
                    "load NAME PATH REPS | spawn NAME REPS CMD... | llama-folder DIR SHAPE | "
                    "llama-open DIR view|print N | "
                    "llama DIR N REPS\n");
    return 2;
}
