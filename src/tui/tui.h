/*
 * tui.h: the interactive view on a real terminal, through ncursesw.
 *
 * This is the one place that talks to the terminal: it reads keys and
 * mouse clicks, hands them to the app, draws the app's frame, and always
 * gives the terminal back as it found it.
 */
#ifndef ATTNSCOPE_TUI_TUI_H
#define ATTNSCOPE_TUI_TUI_H

#include <stdbool.h>

#include "attnscope/base/status.h"
#include "front/app/app.h"

#include <stdio.h>

/* Runs the interactive view until the user quits or a signal arrives. */
enum attn_status tui_run(struct app *a, bool mono, struct attn_error *err);

/*
 * The pieces tui_run is made of, for the benchmark: a screen on the given
 * streams, one frame of the app drawn and sent, and closing it.
 */
struct tui;
struct tui *tui_open(FILE *out, FILE *in, bool mono, struct app *a, struct attn_error *err);
int tui_frame(struct tui *t, struct app *a);
void tui_close(struct tui *t);

#endif
