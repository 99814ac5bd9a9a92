/* parallel.c: matrix products spread over threads (see parallel.h). */
#include "config.h"

#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "attnscope/kernels/linalg.h"
#include "attnscope/kernels/parallel.h"

/* Below this many multiply-adds per thread a thread costs more than it saves. */
#define PARALLEL_MIN_WORK (1L << 18)
/* Columns are split in multiples of this (the kernels' widest block). */
#define PARALLEL_COLUMN_STEP 32

/* Set by parallel_set_threads (--threads); 0: not set. */
static int chosen;

void
parallel_set_threads(int n)
{
    chosen = n >= 1 && n <= PARALLEL_MAX_THREADS ? n : 0;
}

int
parallel_threads(void)
{
    const char *env = getenv("ATTNSCOPE_THREADS");
    long n;

    if (chosen > 0)
        return chosen;
    if (env != NULL) {
        char *end;
        n = strtol(env, &end, 10);
        if (end != env && *end == '\0' && n >= 1 && n <= PARALLEL_MAX_THREADS)
            return (int)n;
    }
    n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > PARALLEL_MAX_THREADS ? PARALLEL_MAX_THREADS : (int)n;
}

struct slice {
    bool nt;
    int m, n, k;
    const float *a;
    int lda;
    const float *b;
    int ldb;
    float *c;
    int ldc;
};

static void
run_slice(const struct slice *s)
{
    if (s->nt)
        linalg_gemm_nt(s->m, s->n, s->k, s->a, s->lda, s->b, s->ldb, s->c, s->ldc);
    else
        linalg_gemm_nn(s->m, s->n, s->k, s->a, s->lda, s->b, s->ldb, s->c, s->ldc);
}

static void *
slice_thread(void *arg)
{
    run_slice(arg);
    return NULL;
}

void
parallel_gemm(bool nt, int m, int n, int k, const float *a, int lda, const float *b, int ldb,
              float *c, int ldc, int threads)
{
    struct slice s[PARALLEL_MAX_THREADS];
    pthread_t tid[PARALLEL_MAX_THREADS];
    bool started[PARALLEL_MAX_THREADS] = { false };
    long work = (long)m * (long)n * (long)k;
    int parts;
    int per;

    if (threads > PARALLEL_MAX_THREADS)
        threads = PARALLEL_MAX_THREADS;
    while (threads > 1 && work / threads < PARALLEL_MIN_WORK)
        threads--;
    per = (n + threads - 1) / threads;
    per = (per + PARALLEL_COLUMN_STEP - 1) / PARALLEL_COLUMN_STEP * PARALLEL_COLUMN_STEP;
    parts = per > 0 ? (n + per - 1) / per : 0;
    if (parts <= 1) {
        struct slice whole = { nt, m, n, k, a, lda, b, ldb, c, ldc };
        run_slice(&whole);
        return;
    }
    for (int t = 0; t < parts; t++) {
        const int j0 = t * per;
        const int cols = n - j0 < per ? n - j0 : per;
        /* Columns j0.. of C: rows j0.. of B stored (n, k), or its columns j0.. stored (k, n). */
        s[t] = (struct slice){ nt, m, cols, k, a, lda, nt ? b + (size_t)j0 * (size_t)ldb : b + j0,
                               ldb, c + j0, ldc };
    }
    /* The first slice is this thread's; a thread that cannot start is run here too. */
    for (int t = 1; t < parts; t++)
        started[t] = pthread_create(&tid[t], NULL, slice_thread, &s[t]) == 0;
    run_slice(&s[0]);
    for (int t = 1; t < parts; t++) {
        if (started[t])
            pthread_join(tid[t], NULL);
        else
            run_slice(&s[t]);
    }
}

struct range {
    void (*fn)(void *ctx, int begin, int end);
    void *ctx;
    int begin, end;
};

static void *
range_thread(void *arg)
{
    struct range *r = arg;

    r->fn(r->ctx, r->begin, r->end);
    return NULL;
}

void
parallel_for(int count, long work_per_item, int threads, void (*fn)(void *ctx, int begin, int end),
             void *ctx)
{
    struct range r[PARALLEL_MAX_THREADS];
    pthread_t tid[PARALLEL_MAX_THREADS];
    bool started[PARALLEL_MAX_THREADS] = { false };
    int per;
    int parts;

    if (count <= 0)
        return;
    if (threads > PARALLEL_MAX_THREADS)
        threads = PARALLEL_MAX_THREADS;
    if (threads > count)
        threads = count;
    while (threads > 1 && (long)count * work_per_item / threads < PARALLEL_MIN_WORK)
        threads--;
    if (threads <= 1) {
        fn(ctx, 0, count);
        return;
    }
    per = (count + threads - 1) / threads;
    parts = (count + per - 1) / per;
    for (int t = 0; t < parts; t++)
        r[t] = (struct range){ fn, ctx, t * per, (t + 1) * per < count ? (t + 1) * per : count };
    for (int t = 1; t < parts; t++)
        started[t] = pthread_create(&tid[t], NULL, range_thread, &r[t]) == 0;
    fn(ctx, r[0].begin, r[0].end);
    for (int t = 1; t < parts; t++) {
        if (started[t])
            pthread_join(tid[t], NULL);
        else
            fn(ctx, r[t].begin, r[t].end);
    }
}
