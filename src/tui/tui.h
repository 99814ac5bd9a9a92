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

#include "attnscope/status.h"
#include "tui/app.h"

/* Runs the interactive view until the user quits or a signal arrives. */
enum attn_status tui_run(struct app *a, bool mono, struct attn_error *err);

#endif
