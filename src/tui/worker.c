/* worker.c: the app's work on a thread of its own (see worker.h). */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "tui/worker.h"

struct worker {
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t wake; /* a job was posted, or the end */
    pthread_cond_t done; /* the job is done */
    struct app *app;
    struct worker_job job;
    bool pending;  /* posted, not yet done */
    bool finish;
};

void
worker_run(struct app *a, const struct worker_job *job)
{
    switch (job->kind) {
    case WORKER_KEY:
        app_key(a, job->key);
        break;
    case WORKER_CLICK:
        app_click(a, job->x, job->y);
        break;
    case WORKER_PASTE:
        app_paste(a, job->text, job->len);
        break;
    }
    app_settle(a);
}

static void *
worker_main(void *arg)
{
    struct worker *w = arg;

    pthread_mutex_lock(&w->lock);
    for (;;) {
        struct worker_job job;
        while (!w->pending && !w->finish)
            pthread_cond_wait(&w->wake, &w->lock);
        if (w->finish)
            break;
        job = w->job;
        pthread_mutex_unlock(&w->lock);
        worker_run(w->app, &job);
        pthread_mutex_lock(&w->lock);
        w->pending = false;
        pthread_cond_signal(&w->done);
    }
    pthread_mutex_unlock(&w->lock);
    return NULL;
}

struct worker *
worker_start(struct app *a)
{
    struct worker *w = calloc(1, sizeof *w);
    pthread_attr_t attr;
    int rc;

    if (w == NULL)
        return NULL;
    w->app = a;
    pthread_mutex_init(&w->lock, NULL);
    pthread_cond_init(&w->wake, NULL);
    pthread_cond_init(&w->done, NULL);
    /* The app's recursion is shallow, but its stack frames hold paths: the default size. */
    pthread_attr_init(&attr);
    rc = pthread_create(&w->thread, &attr, worker_main, w);
    pthread_attr_destroy(&attr);
    if (rc != 0) {
        pthread_cond_destroy(&w->done);
        pthread_cond_destroy(&w->wake);
        pthread_mutex_destroy(&w->lock);
        free(w);
        return NULL;
    }
    return w;
}

void
worker_stop(struct worker *w)
{
    if (w == NULL)
        return;
    pthread_mutex_lock(&w->lock);
    w->finish = true;
    pthread_cond_signal(&w->wake);
    pthread_mutex_unlock(&w->lock);
    pthread_join(w->thread, NULL);
    pthread_cond_destroy(&w->done);
    pthread_cond_destroy(&w->wake);
    pthread_mutex_destroy(&w->lock);
    free(w);
}

void
worker_post(struct worker *w, const struct worker_job *job)
{
    pthread_mutex_lock(&w->lock);
    w->job = *job;
    w->pending = true;
    pthread_cond_signal(&w->wake);
    pthread_mutex_unlock(&w->lock);
}

bool
worker_wait(struct worker *w, int ms)
{
    struct timespec until;
    bool done;

    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += ms / 1000;
    until.tv_nsec += (long)(ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&w->lock);
    while (w->pending)
        if (pthread_cond_timedwait(&w->done, &w->lock, &until) == ETIMEDOUT)
            break;
    done = !w->pending;
    pthread_mutex_unlock(&w->lock);
    return done;
}
