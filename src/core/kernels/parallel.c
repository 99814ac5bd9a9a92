/* parallel.c: matrix products spread over threads (see parallel.h). */
#include "config.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "attnscope/kernels/linalg.h"
#include "attnscope/kernels/parallel.h"

/*
 * Below this many multiply-adds per thread a thread costs more than it
 * saves.  A handoff to a watching worker costs about a microsecond
 * (bench: 1.07 us a parallel_for); a written token's products are one row
 * each, SmolLM2's query projection 331,776 multiply-adds, which at 2^18
 * ran on one thread (2^16: 13.3 -> 11.4 ms a SmolLM2-135M token, 2 threads).
 */
#define PARALLEL_MIN_WORK (1L << 16)
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

/*
 * The pool: threads started once and kept, each waiting for its part of
 * the next call.  Creating a thread per product cost 145 thread starts per
 * GPT-2 forward on 2 threads (and a fresh packing scratch for each, as the
 * workspace is per thread); a pool's workers keep theirs.  One caller uses
 * the pool at a time (pool_use); another caller at the same moment, or a
 * call from inside a worker's part, starts threads of its own as before.
 * Every part is computed the same way on whichever thread runs it, so the
 * pool changes the time, never the bits.
 */
struct task {
    void (*run)(void *arg);
    void *arg;
};

static struct {
    pthread_mutex_t lock; /* guards what follows */
    pthread_cond_t go;    /* a new generation of tasks, or quit */
    pthread_cond_t done;  /* pending reached 0 */
    pthread_t tid[PARALLEL_MAX_THREADS];
    int workers;          /* started: worker w runs tasks[w] (w from 1) */
    unsigned long generation;
    unsigned long born[PARALLEL_MAX_THREADS]; /* the generation worker w was started in */
    struct task tasks[PARALLEL_MAX_THREADS];
    int task_count;       /* tasks[1 .. task_count - 1] are this generation's */
    int pending;          /* of them, not finished */
    bool quit;
    /* generation and pending as last set under the lock, for the spins below */
    atomic_ulong published;
    atomic_int unfinished;
} pool = { .lock = PTHREAD_MUTEX_INITIALIZER,
            .go = PTHREAD_COND_INITIALIZER,
            .done = PTHREAD_COND_INITIALIZER };

/*
 * A forward calls the pool about ten times a layer, microseconds apart: a
 * worker that went to sleep after each part must be woken for the next (a
 * futex round trip, about a tenth of a written token's time on 2 threads).
 * So a worker that finished, and the caller waiting for the workers, first
 * watch for a while (about 20 microseconds of pauses, then they sleep on
 * the condition as before): a wait, never a decision, so the bits are the
 * same.
 */
#define POOL_SPIN 2000

static void
pause_once(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

static pthread_mutex_t pool_use = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t pool_once = PTHREAD_ONCE_INIT;

static void *
worker(void *arg)
{
    const int w = (int)(intptr_t)arg;
    unsigned long seen;

    pthread_mutex_lock(&pool.lock);
    seen = pool.born[w]; /* the generation may have moved on before this thread ran */
    for (;;) {
        struct task t = { NULL, NULL };
        if (pool.generation == seen && !pool.quit) {
            pthread_mutex_unlock(&pool.lock);
            for (int i = 0; i < POOL_SPIN && atomic_load(&pool.published) == seen; i++)
                pause_once();
            pthread_mutex_lock(&pool.lock);
        }
        while (pool.generation == seen && !pool.quit)
            pthread_cond_wait(&pool.go, &pool.lock);
        if (pool.quit)
            break;
        seen = pool.generation;
        if (w >= pool.task_count)
            continue;
        t = pool.tasks[w];
        pthread_mutex_unlock(&pool.lock);
        t.run(t.arg);
        pthread_mutex_lock(&pool.lock);
        atomic_store(&pool.unfinished, --pool.pending);
        if (pool.pending == 0)
            pthread_cond_signal(&pool.done);
    }
    pthread_mutex_unlock(&pool.lock);
    return NULL;
}

/* At exit the workers are stopped and joined (their workspaces freed), so leak checkers see none. */
static void
pool_stop(void)
{
    int workers;

    /* A call under way on another thread (exit during a computation): leave the workers be. */
    if (pthread_mutex_trylock(&pool_use) != 0)
        return;
    pthread_mutex_lock(&pool.lock);
    pool.quit = true;
    workers = pool.workers;
    pthread_cond_broadcast(&pool.go);
    pthread_mutex_unlock(&pool.lock);
    for (int w = 1; w < workers; w++)
        pthread_join(pool.tid[w], NULL);
    pool.workers = 0;
    pthread_mutex_unlock(&pool_use);
}

/* A child of fork has none of the workers (Check runs each test in one): it starts afresh. */
static void
pool_forked(void)
{
    pthread_mutex_init(&pool.lock, NULL);
    pthread_cond_init(&pool.go, NULL);
    pthread_cond_init(&pool.done, NULL);
    pthread_mutex_init(&pool_use, NULL);
    pool.workers = 0;
    pool.task_count = 0;
    pool.pending = 0;
    pool.quit = false;
    atomic_store(&pool.published, pool.generation);
    atomic_store(&pool.unfinished, 0);
}

static void
pool_register(void)
{
    atexit(pool_stop);
    pthread_atfork(NULL, NULL, pool_forked);
}

/*
 * Runs tasks[0 .. count - 1], tasks[0] on this thread, the others on the
 * pool's workers (started as needed), and returns when all are done.
 * false when the pool is busy or cannot start enough workers: the caller
 * runs them its own way.
 */
static bool
pool_run(const struct task *tasks, int count)
{
    pthread_once(&pool_once, pool_register);
    if (pthread_mutex_trylock(&pool_use) != 0)
        return false;
    pthread_mutex_lock(&pool.lock);
    if (pool.quit) {
        pthread_mutex_unlock(&pool.lock);
        pthread_mutex_unlock(&pool_use);
        return false;
    }
    if (pool.workers == 0)
        pool.workers = 1; /* worker 0 is the caller */
    while (pool.workers < count) {
        pool.born[pool.workers] = pool.generation;
        if (pthread_create(&pool.tid[pool.workers], NULL, worker, (void *)(intptr_t)pool.workers) !=
            0)
            break;
        pool.workers++;
    }
    if (pool.workers < count) {
        pthread_mutex_unlock(&pool.lock);
        pthread_mutex_unlock(&pool_use);
        return false;
    }
    for (int t = 1; t < count; t++)
        pool.tasks[t] = tasks[t];
    pool.task_count = count;
    pool.pending = count - 1;
    atomic_store(&pool.unfinished, pool.pending);
    pool.generation++;
    atomic_store(&pool.published, pool.generation);
    pthread_cond_broadcast(&pool.go);
    pthread_mutex_unlock(&pool.lock);
    tasks[0].run(tasks[0].arg);
    for (int i = 0; i < POOL_SPIN && atomic_load(&pool.unfinished) > 0; i++)
        pause_once();
    pthread_mutex_lock(&pool.lock);
    while (pool.pending > 0)
        pthread_cond_wait(&pool.done, &pool.lock);
    pthread_mutex_unlock(&pool.lock);
    pthread_mutex_unlock(&pool_use);
    return true;
}

static void *
task_thread(void *arg)
{
    const struct task *t = arg;

    t->run(t->arg);
    return NULL;
}

/* Runs tasks[0 .. count - 1] on the pool, else on threads started for them, else here. */
static void
run_tasks(struct task *tasks, int count)
{
    pthread_t tid[PARALLEL_MAX_THREADS];
    bool started[PARALLEL_MAX_THREADS] = { false };

    if (count == 1)
        tasks[0].run(tasks[0].arg);
    if (count <= 1 || pool_run(tasks, count))
        return;
    for (int t = 1; t < count; t++)
        started[t] = pthread_create(&tid[t], NULL, task_thread, &tasks[t]) == 0;
    tasks[0].run(tasks[0].arg);
    for (int t = 1; t < count; t++) {
        if (started[t])
            pthread_join(tid[t], NULL);
        else
            tasks[t].run(tasks[t].arg);
    }
}

/*
 * The columns each thread takes of a product of cols columns and work
 * multiply-adds on up to threads threads (fewer when each would have less
 * than PARALLEL_MIN_WORK), a multiple of step; 0 when cols is 0.
 */
static int
columns_per_thread(int cols, long work, int threads, int step)
{
    int per;

    if (threads > PARALLEL_MAX_THREADS)
        threads = PARALLEL_MAX_THREADS;
    while (threads > 1 && work / threads < PARALLEL_MIN_WORK)
        threads--;
    if (threads < 1)
        threads = 1;
    per = (cols + threads - 1) / threads;
    return (per + step - 1) / step * step;
}

struct slice {
    bool nt;
    int m, n, k;
    const float *a;
    int lda;
    const void *b; /* floats, or bfloat16 when bf16 */
    bool bf16;
    int ldb;
    float *c;
    int ldc;
};

static void
run_slice(const struct slice *s)
{
    if (s->bf16)
        linalg_gemm_bf16(s->nt, s->m, s->n, s->k, s->a, s->lda, s->b, s->ldb, s->c, s->ldc);
    else if (s->nt)
        linalg_gemm_nt(s->m, s->n, s->k, s->a, s->lda, s->b, s->ldb, s->c, s->ldc);
    else
        linalg_gemm_nn(s->m, s->n, s->k, s->a, s->lda, s->b, s->ldb, s->c, s->ldc);
}

static void
slice_task(void *arg)
{
    run_slice(arg);
}

/* The product's columns split among the threads (b's elements esize bytes). */
static void
gemm_split(const struct slice *whole, size_t esize, int threads)
{
    struct slice s[PARALLEL_MAX_THREADS];
    struct task tasks[PARALLEL_MAX_THREADS];
    const int n = whole->n;
    const int per = columns_per_thread(n, (long)whole->m * (long)n * (long)whole->k, threads,
                                       PARALLEL_COLUMN_STEP);
    const int parts = per > 0 ? (n + per - 1) / per : 0;

    if (parts <= 1) {
        run_slice(whole);
        return;
    }
    for (int t = 0; t < parts; t++) {
        const int j0 = t * per;
        /* Columns j0.. of C: rows j0.. of B stored (n, k), or its columns j0.. stored (k, n). */
        const size_t skip = whole->nt ? (size_t)j0 * (size_t)whole->ldb : (size_t)j0;
        s[t] = *whole;
        s[t].n = n - j0 < per ? n - j0 : per;
        s[t].b = (const unsigned char *)whole->b + skip * esize;
        s[t].c = whole->c + j0;
        tasks[t] = (struct task){ slice_task, &s[t] };
    }
    run_tasks(tasks, parts);
}

void
parallel_gemm(bool nt, int m, int n, int k, const float *a, int lda, const float *b, int ldb,
              float *c, int ldc, int threads)
{
    const struct slice whole = { nt, m, n, k, a, lda, b, false, ldb, c, ldc };

    gemm_split(&whole, sizeof *b, threads);
}

void
parallel_gemm_bf16(bool nt, int m, int n, int k, const float *a, int lda, const uint16_t *b,
                   int ldb, float *c, int ldc, int threads)
{
    const struct slice whole = { nt, m, n, k, a, lda, b, true, ldb, c, ldc };

    gemm_split(&whole, sizeof *b, threads);
}

struct packed_slice {
    int m;
    const float *a;
    int lda;
    const struct linalg_packed *pk;
    int j0, cols;
    float *c; /* where column j0 goes */
    int ldc;
    int failed;
};

static void
packed_task(void *arg)
{
    struct packed_slice *s = arg;

    s->failed = linalg_gemm_packed_cols(s->m, s->a, s->lda, s->pk, s->j0, s->cols, s->c,
                                        s->ldc) != 0;
}

int
parallel_gemm_packed(int m, const float *a, int lda, const struct linalg_packed *pk, int j0,
                     int cols, float *c, int ldc, int threads)
{
    struct packed_slice s[PARALLEL_MAX_THREADS];
    struct task tasks[PARALLEL_MAX_THREADS];
    const int step = pk->nr > 0 ? pk->nr : 1;
    int parts = 0;
    int per;

    if (pk->data == NULL || j0 < 0 || j0 % step != 0 || cols < 0 || cols > pk->n - j0)
        return -1;
    per = columns_per_thread(cols, (long)m * (long)cols * (long)pk->k, threads, step);
    for (int at = 0; per > 0 && at < cols; at += per) {
        s[parts] = (struct packed_slice){ m, a, lda, pk, j0 + at, cols - at < per ? cols - at : per,
                                          c + at, ldc, 0 };
        tasks[parts] = (struct task){ packed_task, &s[parts] };
        parts++;
    }
    run_tasks(tasks, parts);
    for (int t = 0; t < parts; t++)
        if (s[t].failed)
            return -1;
    return 0;
}

struct range {
    void (*fn)(void *ctx, int begin, int end);
    void *ctx;
    int begin, end;
};

static void
range_task(void *arg)
{
    struct range *r = arg;

    r->fn(r->ctx, r->begin, r->end);
}

void
parallel_for(int count, long work_per_item, int threads, void (*fn)(void *ctx, int begin, int end),
             void *ctx)
{
    struct range r[PARALLEL_MAX_THREADS];
    struct task tasks[PARALLEL_MAX_THREADS];
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
    for (int t = 0; t < parts; t++) {
        r[t] = (struct range){ fn, ctx, t * per, (t + 1) * per < count ? (t + 1) * per : count };
        tasks[t] = (struct task){ range_task, &r[t] };
    }
    run_tasks(tasks, parts);
}
