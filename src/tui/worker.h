/*
 * worker.h: the app's work on a thread of its own.
 *
 * Every key, click and paste is handed to the app on one long-lived
 * thread, so that the terminal's thread keeps reading keys while a model
 * is recomputed: it draws a busy line with the core's progress and lets
 * Esc, q and Ctrl-C stop the computation (progress.h).  One thread, not
 * one per key: the thread's workspace (its spare stage arena and packing
 * scratch) is reused from key to key.  Only the worker touches the app
 * while a job runs; the terminal's thread touches it again once the job
 * is done.
 */
#ifndef ATTNSCOPE_TUI_WORKER_H
#define ATTNSCOPE_TUI_WORKER_H

#include <stdbool.h>
#include <stddef.h>

#include "front/app/app.h"

enum worker_job_kind { WORKER_KEY, WORKER_CLICK, WORKER_PASTE };

struct worker_job {
    enum worker_job_kind kind;
    int key;          /* WORKER_KEY */
    int x, y;         /* WORKER_CLICK */
    const char *text; /* WORKER_PASTE: the caller's until the job is done */
    size_t len;
};

struct worker;

/* Starts the thread; NULL when it cannot be started (the caller then runs jobs itself). */
struct worker *worker_start(struct app *a);
/* Ends the thread (after the job under way, if any) and frees it. */
void worker_stop(struct worker *w);

/* Hands job to the thread (a job must not be under way). */
void worker_post(struct worker *w, const struct worker_job *job);
/* Waits up to ms milliseconds for the job to be done; true when it is. */
bool worker_wait(struct worker *w, int ms);

/* Runs job on the calling thread: what the worker does with it. */
void worker_run(struct app *a, const struct worker_job *job);

#endif
