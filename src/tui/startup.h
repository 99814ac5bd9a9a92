/*
 * startup.h: what the interactive view is doing before it can draw (a
 * model read from disk, its weights packed, its first forward): a line on
 * the terminal's standard error, at once and kept up to date from the
 * core's progress (base/progress.h), cleared when the view starts.
 */
#ifndef ATTNSCOPE_TUI_STARTUP_H
#define ATTNSCOPE_TUI_STARTUP_H

/* Starts the line (nothing when standard error is not a terminal). */
void startup_begin(void);

/* Stops and clears it; safe to call when it never started, and again. */
void startup_end(void);

#endif
