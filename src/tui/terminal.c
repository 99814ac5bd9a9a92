/*
 * terminal.c: the terminal under curses kept sane (terminal.h): signals
 * caught and the terminal restored before the process dies of them,
 * bracketed paste, flow control, a hung-up terminal noticed, 24-bit colour.
 */
#include "config.h"

#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#ifdef HAVE_NCURSESW_CURSES_H
#include <ncursesw/curses.h>
#include <ncursesw/term.h>
#else
#include <curses.h>
#include <term.h>
#endif

#include "attnscope/files/filemap.h"
#include "tui/terminal.h"

static volatile sig_atomic_t caught_signal;
static volatile sig_atomic_t resumed;
static int curses_active;
static int paste_active;

static void
on_signal(int sig)
{
    caught_signal = sig;
}

static void
on_continue(int sig)
{
    (void)sig;
    resumed = 1;
}

/* A terminfo string, or fallback when the entry lacks it (screen's entries lack BE and BD). */
const char *
terminal_cap(const char *name, const char *fallback)
{
    char *cap = tigetstr(name);

    return cap == NULL || cap == (char *)-1 ? fallback : cap;
}

/* Turns bracketed paste on or off; written at once, outside curses' buffer. */
void
terminal_paste_mode(bool on)
{
    const char *seq = on ? terminal_cap("BE", "\033[?2004h") : terminal_cap("BD", "\033[?2004l");
    size_t len = strlen(seq);

    while (len > 0) {
        ssize_t n = write(STDOUT_FILENO, seq, len);
        if (n <= 0)
            break;
        seq += n;
        len -= (size_t)n;
    }
    paste_active = on;
}

void
terminal_restore(void)
{
    if (curses_active) {
        char *rmcup = tigetstr("rmcup");
        curses_active = 0;
        /* Without an alternate screen (vt100, the Linux console) the last frame would stay. */
        if (rmcup == NULL || rmcup == (char *)-1) {
            clear();
            refresh();
        }
        endwin();
        if (paste_active)
            terminal_paste_mode(false);
    }
}

/*
 * What a crash restores with async-signal-safe calls only: the terminal's
 * settings as the shell had them, and the bytes that leave the alternate
 * screen, show the cursor, reset the attributes and turn the mouse and
 * bracketed paste off (made once curses is set up).
 */
static struct termios shell_tio;
static int shell_fd = -1, screen_fd = -1;
static char crash_bytes[256];
static size_t crash_len;

static void
add_crash_bytes(const char *cap, const char *fallback)
{
    const char *seq = cap != NULL ? terminal_cap(cap, fallback) : fallback;
    const size_t n = seq != NULL ? strlen(seq) : 0;

    if (n > 0 && crash_len + n < sizeof crash_bytes) {
        memcpy(crash_bytes + crash_len, seq, n);
        crash_len += n;
    }
}

/*
 * A fault (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP, SIGSYS) means a
 * bug, and the program cannot go on to the loop's endwin(): the terminal is
 * put back here, then the signal ends the process as it would have.
 */
static void
on_crash(int sig)
{
    if (curses_active) {
        if (screen_fd >= 0 && crash_len > 0 && write(screen_fd, crash_bytes, crash_len) < 0)
            crash_len = 0;
        if (shell_fd >= 0)
            tcsetattr(shell_fd, TCSANOW, &shell_tio);
    }
    signal(sig, SIG_DFL);
    raise(sig);
}

/*
 * A fault's handler: a SIGBUS inside a model file's mapping (the file cut
 * short while the view reads it) is repaired and the read goes on, the
 * computation refusing afterwards (filemap.h); any other fault is a crash.
 */
static void
on_fault(int sig, siginfo_t *info, void *uc)
{
    (void)uc;
    if (sig == SIGBUS && info != NULL && filemap_repair(info->si_addr))
        return;
    on_crash(sig);
}

/*
 * Every signal whose default is to end the process: each is caught, the
 * terminal restored, and the signal raised again so that the exit status
 * still names it.  The faults are restored from their handler at once
 * (on_crash); the others set a flag the loop sees within a read's wait.
 * SIGXFSZ stays ignored (main.c: a file size limit fails a write instead),
 * SIGKILL and SIGSTOP cannot be caught, SIGTSTP is curses' own.
 */
static const int fatal_signals[] = {
    SIGINT,  SIGTERM, SIGHUP,  SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM, SIGPIPE,
    SIGVTALRM, SIGPROF, SIGXCPU, SIGIO,
#ifdef SIGPWR
    SIGPWR,
#endif
#ifdef SIGSTKFLT
    SIGSTKFLT,
#endif
};
static const int fault_signals[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP, SIGSYS };

void
terminal_catch_signals(void)
{
    struct sigaction sa;

    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof fatal_signals / sizeof fatal_signals[0]; i++)
        sigaction(fatal_signals[i], &sa, NULL);
    for (int sig = SIGRTMIN; sig <= SIGRTMAX; sig++)
        sigaction(sig, &sa, NULL);
    sa.sa_sigaction = on_fault;
    sa.sa_flags = SA_SIGINFO;
    for (size_t i = 0; i < sizeof fault_signals / sizeof fault_signals[0]; i++)
        sigaction(fault_signals[i], &sa, NULL);
    sa.sa_flags = 0;
    /* Back from Ctrl-Z: the shell may have turned bracketed paste off meanwhile. */
    sa.sa_handler = on_continue;
    sigaction(SIGCONT, &sa, NULL);
}

/*
 * Flow control off: Ctrl-S would freeze the screen until Ctrl-Q.  ncurses
 * restores the settings it found at endwin(); def_prog_mode() makes these
 * the ones it returns to after Ctrl-Z and fg.
 */
void
terminal_no_flow_control(void)
{
    struct termios tio;

    if (tcgetattr(STDIN_FILENO, &tio) == 0) {
        tio.c_iflag &= ~(tcflag_t)(IXON | IXOFF);
        tcsetattr(STDIN_FILENO, TCSANOW, &tio);
        def_prog_mode();
    }
}

/* Whether the terminal on stdin has hung up or failed (its master side closed). */
bool
terminal_gone(void)
{
    struct pollfd pfd = { STDIN_FILENO, POLLIN, 0 };

    return poll(&pfd, 1, 0) == 1 && (pfd.revents & (POLLHUP | POLLERR | POLLNVAL)) != 0;
}

bool
terminal_env_set(const char *name)
{
    const char *v = getenv(name);
    return v != NULL && v[0] != '\0';
}

/* A "-direct" terminfo entry for $TERM, when COLORTERM promises 24-bit colour. */
const char *
terminal_direct(char *buf, size_t size)
{
    const char *colorterm = getenv("COLORTERM");
    const char *term = getenv("TERM");
    const char *dash;
    int errret = 0;

    if (colorterm == NULL || term == NULL ||
        (strcmp(colorterm, "truecolor") != 0 && strcmp(colorterm, "24bit") != 0))
        return NULL;
    if (strstr(term, "-direct") != NULL)
        return NULL;
    dash = strchr(term, '-');
    snprintf(buf, size, "%.*s-direct", dash ? (int)(dash - term) : (int)strlen(term), term);
    if (setupterm(buf, STDOUT_FILENO, &errret) != OK)
        return NULL;
    del_curterm(cur_term);
    return buf;
}

void
terminal_begin(FILE *in, FILE *out)
{
    if (tcgetattr(fileno(in), &shell_tio) == 0)
        shell_fd = fileno(in);
    screen_fd = fileno(out);
}

void
terminal_started(void)
{
    curses_active = 1;
}

void
terminal_crash_bytes(void)
{
    crash_len = 0;
    add_crash_bytes("sgr0", "\033[m");
    add_crash_bytes("cnorm", "");
    add_crash_bytes(NULL, "\033[?1000l\033[?1006l"); /* the mouse's reports off */
    add_crash_bytes("BD", "\033[?2004l");
    add_crash_bytes("rmcup", "");
}

int
terminal_signal(void)
{
    return (int)caught_signal;
}

void
terminal_signal_clear(void)
{
    caught_signal = 0;
}

bool
terminal_take_resumed(void)
{
    if (!resumed)
        return false;
    resumed = 0;
    return true;
}
