/*
 * terminal.h: the terminal under curses kept sane for tui.c: what the shell
 * had is put back on every way out (a quit, a fatal signal, a crash), and
 * the loop asks here which signal arrived and whether the process came back
 * from Ctrl-Z.
 */
#ifndef ATTNSCOPE_TUI_TERMINAL_H
#define ATTNSCOPE_TUI_TERMINAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* A terminfo string, or fallback when the entry lacks it (screen's entries lack BE and BD). */
const char *terminal_cap(const char *name, const char *fallback);
/* Turns bracketed paste on or off; written at once, outside curses' buffer. */
void terminal_paste_mode(bool on);
/* The settings of in (the shell's) kept, and out named, before curses starts. */
void terminal_begin(FILE *in, FILE *out);
/* Curses has started: terminal_restore and a crash now put the terminal back. */
void terminal_started(void);
/* The bytes a crash writes to leave curses' state (made once curses is set up). */
void terminal_crash_bytes(void);
/* Leaves curses (the alternate screen, bracketed paste); does nothing the second time. */
void terminal_restore(void);
/*
 * Every signal whose default ends the process caught: a fault restores the
 * terminal at once and dies of it; the others are kept for terminal_signal.
 */
void terminal_catch_signals(void);
/* The signal caught since the last terminal_signal_clear, or 0. */
int terminal_signal(void);
void terminal_signal_clear(void);
/* Whether the process came back from Ctrl-Z since last asked. */
bool terminal_take_resumed(void);
/* Flow control off: Ctrl-S would freeze the screen until Ctrl-Q. */
void terminal_no_flow_control(void);
/* Whether the terminal on stdin has hung up or failed (its master side closed). */
bool terminal_gone(void);
/* Whether the environment variable is set and not empty. */
bool terminal_env_set(const char *name);
/* A "-direct" terminfo entry for $TERM into buf, when COLORTERM promises 24-bit colour, or NULL. */
const char *terminal_direct(char *buf, size_t size);

#endif
