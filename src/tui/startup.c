/* startup.c: the line that says what the view is doing before it draws (see startup.h). */
#include "config.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "attnscope/base/progress.h"
#include "tui/startup.h"

#define STARTUP_TICK_NS 100000000L /* the line is brought up to date ten times a second */

static pthread_t reporter;
static atomic_bool done;
static bool running;

/* The line now: "attnscope: reading the weights: 5 of 12" (a carriage return, no newline). */
static void
report(void)
{
    long at;
    long of;
    const char *what = progress_now(&at, &of);

    if (what != NULL && of > 1)
        fprintf(stderr, "\r\033[Kattnscope: %s: %ld of %ld (Ctrl-C stops)", what, at, of);
    else
        fprintf(stderr, "\r\033[Kattnscope: %s (Ctrl-C stops)", what != NULL ? what : "starting");
    fflush(stderr);
}

static void *
report_until_done(void *arg)
{
    const struct timespec tick = { 0, STARTUP_TICK_NS };

    (void)arg;
    while (!atomic_load(&done)) {
        report();
        nanosleep(&tick, NULL);
    }
    return NULL;
}

void
startup_begin(void)
{
    if (running || !isatty(STDERR_FILENO))
        return;
    atomic_store(&done, false);
    report(); /* at once, before anything is read */
    running = pthread_create(&reporter, NULL, report_until_done, NULL) == 0;
    if (!running)
        fputs("\r\033[K", stderr); /* (no thread: no line to keep up to date either) */
}

void
startup_end(void)
{
    if (!running)
        return;
    atomic_store(&done, true);
    pthread_join(reporter, NULL);
    running = false;
    fputs("\r\033[K", stderr);
    fflush(stderr);
}
