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
 *   bench qrows TYPE N K REPS  one row against an (N, K) matrix of random
 *                           blocks of TYPE (Q4_0 ... Q6_K, MXFP4, F16)
 *                           packed as a model's are, on one thread, on the
 *                           instruction set in force (ATTNSCOPE_ISA):
 *                           ms, then ns a weight and the pack's GB/s
 *                           (BENCH_INT8=1: the opt-in int8 arithmetic, on
 *                           Q4_K and Q6_K from the blocks as a model reads
 *                           them; BENCH_PANELS=1 beside it: from the panels)
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
#include "attnscope/formats/quants.h"
#include "attnscope/formats/tensor.h"
#include "attnscope/families/model/family_model.h"
#include "attnscope/architectures/gpt2.h"
#include "attnscope/models/model.h"
#include "../gpt2_random.h"
#include "../llama_random.h"
#include "attnscope/architectures/llama.h"
#include "attnscope/kernels/linalg.h"
#include "attnscope/kernels/parallel.h"
#include "attnscope/pipeline/pipeline.h"
#include "front/app/app.h"
#include "tui/tui.h"
#include "bench.h"

#define D_MODEL 768
#define HEADS 12

double
bench_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* The CPU time of the whole process (every thread), in seconds. */
double
bench_cpu_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int
bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a;
    double y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Prints "name median min max" in milliseconds, then extra. */
void
bench_report(const char *name, double *t, int n, const char *extra)
{
    qsort(t, (size_t)n, sizeof *t, bench_cmp_double);
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
    t = bench_now();
    for (int i = 1; i < threads; i++)
        pthread_create(&tid[i], NULL, probe_thread, &iters);
    probe_thread(&iters);
    for (int i = 1; i < threads; i++)
        pthread_join(tid[i], NULL);
    t = bench_now() - t;
    printf("peak_threads\t%d\n", threads);
    printf("peak_all_gflops\t%.1f\n", (double)threads * iters * 12 * width * 2 / t / 1e9);
}

/*
 * Memory read bandwidth: threads threads each summing its share of a
 * 512 MiB buffer (64-bit words, eight sums: the loads are what limits it),
 * best of five.  What a written token's bound is computed from (bench/run
 * section 11: the weights a token reads over this).
 */
struct bw_job {
    const uint64_t *words;
    size_t count;
    uint64_t sum;
};

static void *
bw_thread(void *arg)
{
    struct bw_job *j = arg;
    uint64_t s[8] = { 0 };

    for (size_t i = 0; i + 8 <= j->count; i += 8)
        for (int l = 0; l < 8; l++)
            s[l] += j->words[i + (size_t)l];
    for (int l = 0; l < 8; l++)
        j->sum += s[l];
    return NULL;
}

static int
cmd_bandwidth(void)
{
    const size_t bytes = (size_t)512 << 20;
    uint64_t *buf = malloc(bytes);

    if (buf == NULL)
        return 1;
    memset(buf, 1, bytes);
    for (int threads = 1; threads <= 2; threads++) {
        double best = 1e30;
        for (int r = 0; r < 5; r++) {
            pthread_t tid[2];
            struct bw_job jobs[2];
            double t0 = bench_now();
            for (int i = 0; i < threads; i++) {
                jobs[i] = (struct bw_job){ buf + (size_t)i * (bytes / 8 / (size_t)threads),
                                           bytes / 8 / (size_t)threads, 0 };
                pthread_create(&tid[i], NULL, bw_thread, &jobs[i]);
            }
            for (int i = 0; i < threads; i++)
                pthread_join(tid[i], NULL);
            t0 = bench_now() - t0;
            best = t0 < best ? t0 : best;
            if (jobs[0].sum == 42) /* (keeps the sums) */
                printf("#\n");
        }
        printf("bandwidth_%d\t%.1f\n", threads, (double)bytes / best / 1e9);
    }
    free(buf);
    return 0;
}

static int
cmd_probe(void)
{
#if defined(__x86_64__) && defined(__GNUC__)
    const long iters = 100000000;
    double t;
    volatile float sink;

    if (__builtin_cpu_supports("avx512f")) {
        t = bench_now();
        sink = probe512(iters);
        t = bench_now() - t;
        printf("peak_avx512_gflops\t%.1f\n", (double)iters * 12 * 16 * 2 / t / 1e9);
    }
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
        t = bench_now();
        sink = probe256(iters);
        t = bench_now() - t;
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
        double t0 = bench_now();
        attention_project(&p.st, &cfg, &p.inputs, &p.inputs, &p.params);
        attention_attend(&p.st, &cfg, &p.params, &rr);
        total[r] = bench_now() - t0;
    }
    /* The four d x d products alone, the biggest matrix multiply of the forward. */
    for (int r = 0; r < reps; r++) {
        double t0 = bench_now();
        for (int w = 0; w < 4; w++)
            linalg_gemm_packed(n, p.inputs.data, D_MODEL, &p.params.p[w].packed,
                               p.st.output.data, D_MODEL);
        mm[r] = bench_now() - t0;
    }
    qsort(total, (size_t)reps, sizeof total[0], bench_cmp_double);
    qsort(mm, (size_t)reps, sizeof mm[0], bench_cmp_double);
    snprintf(extra, sizeof extra, "%.1f\t%.1f", flops / total[reps / 2] / 1e9,
             mm_flops / mm[reps / 2] / 1e9);
    {
        char name[32];
        snprintf(name, sizeof name, "forward_%d", n);
        bench_report(name, total, reps, extra);
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
        double t0 = bench_now();
        app_key(a, keys[r % nkeys]);
        tui_frame(t, a);
        times[r] = bench_now() - t0;
    }
    bench_report(label, times, reps, NULL);
}

/* The view on src, drawing into out (the terminal's size from COLUMNS and LINES); NULL: said. */
struct tui *
bench_open_view(struct app *a, const struct attention_config *cfg, const struct pipeline_source *src,
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
        t = bench_open_view(&a, &cfg, &src, in, out);
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
                t0 = bench_now();
                app_key(&a, APP_KEY_ENTER);
                tui_frame(t, &a);
                times[r] = bench_now() - t0;
            }
            snprintf(label, sizeof label, "frame_%s_sentence", fc->name);
            bench_report(label, times, reps, NULL);
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
        double t0 = bench_now();
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
        times[r] = bench_now() - t0;
    }
    bench_report(name, times, reps, NULL);
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
    struct arch_options o = { NULL, 0, false };

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
        double t0 = bench_now();
        if (architecture_load(&m, dir, &o, &err) != ATTN_OK) {
            fprintf(stderr, "bench: %s\n", err.msg);
            return 1;
        }
        times[r] = bench_now() - t0;
        decoder_destroy(&m);
    }
    bench_report(name, times, reps, NULL);
    return 0;
}

/* ------------------------------------------------------------------ qrows */

/*
 * One row against an (n, k) matrix of random blocks of a type, packed in
 * panels as a model's are: the kernel of a written token, alone.
 */
static int
cmd_qrows(const char *type, int n, int k, int reps)
{
    static const char *const names[QUANT_TYPES] = { "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0",
                                                    "Q2_K", "Q3_K", "Q4_K", "Q5_K", "Q6_K",
                                                    "MXFP4" };
    const bool f16 = strcmp(type, "F16") == 0;
    int t = -1;
    double times[MAX_REPS];
    struct linalg_packed pk;
    unsigned seed = 1;
    float *x, *y;
    unsigned char *raw = NULL;
    bool by_rows;
    char name[64], extra[96];

    for (int i = 0; i < QUANT_TYPES; i++)
        if (strcmp(type, names[i]) == 0)
            t = i;
    if ((t < 0 && !f16) || n <= 0 || k <= 0 || n % LINALG_QROWS != 0 || k % 256 != 0) {
        fprintf(stderr, "bench: qrows TYPE (Q4_0 ... Q6_K, MXFP4, F16) N K REPS, N a multiple of "
                        "64 and K of 256\n");
        return 2;
    }
    if (reps > MAX_REPS)
        reps = MAX_REPS;
    if (linalg_pack_q(&pk, f16 ? LINALG_F16 : quant_panel_format((enum quant_type)t), n, k) != 0)
        return 1;
    if (f16) {
        uint16_t *h = malloc((size_t)LINALG_QROWS * (size_t)k * sizeof *h);
        for (int j0 = 0; h != NULL && j0 < n; j0 += LINALG_QROWS) {
            for (size_t i = 0; i < (size_t)LINALG_QROWS * (size_t)k; i++) {
                seed = seed * 1103515245u + 12345u;
                h[i] = (uint16_t)(0x3000 | (seed >> 16 & 0x83ff));
            }
            linalg_pack_q_put_f16(&pk, j0, LINALG_QROWS, h, (size_t)k);
        }
        free(h);
    } else {
        const enum quant_type qt = (enum quant_type)t;
        const int per = quant_block_values(qt);
        const size_t row_bytes = (size_t)(k / per) * quant_block_bytes(qt);
        struct linalg_qparts *parts = malloc(LINALG_QROWS * sizeof *parts);
        raw = malloc((size_t)n * row_bytes);
        for (int j0 = 0; raw != NULL && parts != NULL && j0 < n; j0 += LINALG_QROWS)
            for (int sg = 0; sg < k / per; sg++) {
                for (int r = 0; r < LINALG_QROWS; r++) {
                    unsigned char *block = raw + (size_t)(j0 + r) * row_bytes + (size_t)sg * quant_block_bytes(qt);
                    for (size_t i = 0; i < quant_block_bytes(qt); i++) {
                        seed = seed * 1103515245u + 12345u;
                        block[i] = (unsigned char)(seed >> 16);
                    }
                    /* (a finite half-precision scale where every type keeps its first) */
                    if (qt != QUANT_MXFP4)
                        block[qt == QUANT_Q6_K ? 209 : qt == QUANT_Q3_K ? 109 : qt == QUANT_Q2_K ? 81 : 1] = 0x30;
                    quant_parts(qt, block, &parts[r]);
                }
                linalg_pack_q_put_panel(&pk, j0, sg, parts, LINALG_QROWS);
            }
        free(parts);
    }
    x = malloc((size_t)k * sizeof *x);
    y = malloc((size_t)n * sizeof *y);
    if (x == NULL || y == NULL)
        return 1;
    pk.int8 = getenv("BENCH_INT8") != NULL;
    for (int i = 0; i < k; i++)
        x[i] = (float)(i % 7) - 3.0f;
    /* (the int8 arithmetic reads Q4_K and Q6_K where they lie, as a model does) */
    by_rows = pk.int8 && raw != NULL && quant_int8_by_rows((enum quant_type)t) && getenv("BENCH_PANELS") == NULL;
    for (int r = 0; r < reps; r++) {
        double t0 = bench_now();
        if (by_rows)
            quant_int8_product((enum quant_type)t, raw, n, k, 1, x, k, y, n, 1);
        else
            linalg_gemm_packed_cols(1, x, k, &pk, 0, n, y, n);
        times[r] = bench_now() - t0;
    }
    qsort(times, (size_t)reps, sizeof *times, bench_cmp_double);
    snprintf(name, sizeof name, "qrows_%s_%s%s_%dx%d", type, cpu_isa_name(), pk.int8 ? "_int8" : "",
             n, k);
    snprintf(extra, sizeof extra, "%.4f\t%.1f", times[reps / 2] * 1e9 / ((double)n * k),
             (double)linalg_packed_bytes(&pk) / times[reps / 2] / 1e9);
    bench_report(name, times, reps, extra);
    linalg_packed_destroy(&pk);
    free(raw);
    free(x);
    free(y);
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
    if (argc >= 5 && strcmp(argv[1], "generate") == 0)
        return cmd_generate(argv[2], atoi(argv[3]), atoi(argv[4]), argc >= 6 ? atoi(argv[5]) : 1);
    if (argc >= 5 && strcmp(argv[1], "bpe-tokenizer") == 0)
        return cmd_bpe_tokenizer(argv[2], atoi(argv[3]), argv[4]);
    if (argc >= 5 && strcmp(argv[1], "generate-view") == 0)
        return cmd_generate_view(argv[2], atoi(argv[3]), atoi(argv[4]));
    if (argc >= 2 && strcmp(argv[1], "probe") == 0)
        return cmd_probe();
    if (argc >= 6 && strcmp(argv[1], "qrows") == 0)
        return cmd_qrows(argv[2], atoi(argv[3]), atoi(argv[4]), atoi(argv[5]));
    if (argc >= 2 && strcmp(argv[1], "bandwidth") == 0)
        return cmd_bandwidth();
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
        printf("gpt2_bytes_%zu\t%zu\n", n, family_model_pipeline_bytes(&gpt2_small, (int)n, 5));
        return 0;
    }
    if (argc >= 3 && strcmp(argv[1], "gpt2-folder") == 0)
        return cmd_gpt2_folder(argv[2]);
    if (argc >= 5 && strcmp(argv[1], "load") == 0)
        return cmd_load(argv[2], argv[3], atoi(argv[4]));
    if (argc >= 5 && strcmp(argv[1], "spawn") == 0)
        return cmd_spawn(argv[2], atoi(argv[3]), argv + 4);
    fprintf(stderr, "usage: bench probe | bandwidth | forward N REPS | rss N | frame REPS | "
                    "gpt2 N REPS | gpt2-edit N REPS | gpt2-folder DIR | gpt2-view DIR N REPS | "
                    "load NAME PATH REPS | spawn NAME REPS CMD... | llama-folder DIR SHAPE | "
                    "llama-open DIR view|print N | "
                    "llama DIR N REPS | generate DIR N COUNT [ROUNDS] | generate-view DIR N REPS | "
                    "bpe-tokenizer VOCAB_DIR SIZE OUT\n");
    return 2;
}
