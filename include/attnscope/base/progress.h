/*
 * progress.h: how far the long computation under way has come, and a
 * request to stop it.
 *
 * A front end that runs a computation on one thread and reads keys on
 * another (the interactive view) shows how far it is and lets Esc, q or
 * Ctrl-C stop it within a layer's time.  The core's long loops (a model's
 * layers and its logits, the tokenizer's pieces, an export's layers) say
 * where they are with progress_step() and give up with ATTN_ESTOPPED when
 * progress_stopped() is true; the front end keeps what it had.  Atomic
 * reads and writes only: progress_stop() is safe from a signal handler and
 * from any thread, and costs the loops one load.
 */
#ifndef ATTNSCOPE_PROGRESS_H
#define ATTNSCOPE_PROGRESS_H

#include <stdbool.h>

/* What is under way ("running the model", a string that lives on) and its size in steps. */
void progress_begin(const char *what, long total);
/* done of the total steps are finished. */
void progress_step(long done);
/* The step under way is over (a request to stop stays for the next). */
void progress_end(void);

/* Asks the computation under way to stop at its next step. */
void progress_stop(void);
/* Whether a stop was asked for since the last progress_reset(). */
bool progress_stopped(void);
/* Before a front end starts a computation: nothing under way, no stop asked for. */
void progress_reset(void);

/* What is under way (NULL when nothing), and how far: for a front end's busy line. */
const char *progress_now(long *done, long *total);

#endif
