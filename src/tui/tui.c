/*
 * tui.c: ncursesw front end (see tui.h).
 *
 * Colour: direct RGB when COLORTERM says truecolor and a "-direct" terminfo
 * entry exists for the terminal, the 256-colour cube when the terminal has
 * 256 colours, the 8 basic colours otherwise, and none at all with NO_COLOR,
 * --mono or a terminal without colour (the renderer then draws glyph ramps).
 * Signals only set a flag; the main loop notices it within 25 ms (the
 * input timeout) and leaves through endwin().  The app's work runs on a
 * thread of its own (worker.h): while it takes longer than a read's wait,
 * the last line says what it is doing and how far it is, and Esc stops it,
 * q stops it and quits, Ctrl-C stops it and leaves as the signal asks.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <langinfo.h>
#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <wchar.h>

#ifdef HAVE_NCURSESW_CURSES_H
#include <ncursesw/curses.h>
#include <ncursesw/term.h>
#else
#include <curses.h>
#include <term.h>
#endif

#include "attnscope/base/progress.h"
#include "attnscope/files/filemap.h"
#include "attnscope/text/tokenizer.h"
#include "attnscope/base/utf8.h"
#include "render/grid.h"
#include "render/palette.h"
#include "tui/terminal.h"
#include "tui/tui.h"
#include "tui/worker.h"

/* How long a read waits for a key, so that resizes and signals are seen promptly. */
#define TUI_READ_MS 25
/* Keys handled at most before a frame is drawn, when keys keep coming. */
#define TUI_KEYS_PER_FRAME 32

/*
 * Bracketed paste: the terminal wraps pasted text in two marks, read as two
 * key codes of our own, so that a paste is text for the sentence and never
 * keys (a pasted "q" does not quit).  A paste whose end mark never comes
 * ends after this long without input.
 */
#define TUI_KEY_PASTE_BEGIN (KEY_MAX + 101)
#define TUI_KEY_PASTE_END (KEY_MAX + 102)
#define TUI_PASTE_GAP_MS 500

struct screen {
    enum palette_depth depth;
    bool utf8;
};

static int
pair_for(const struct screen *s, const struct cell *c)
{
    int fg;
    int bg;
    int pair;

    grid_cell_colours(c, s->depth, &fg, &bg);
    if (fg == -1 && bg == -1)
        return 0;
    if (s->depth == DEPTH_DIRECT) {
        /* Direct entries send 0 to 7 as the 8 themed ANSI colours: 0x000007 would be white. */
        if (fg >= 0 && fg < 8)
            fg = 8;
        if (bg >= 0 && bg < 8)
            bg = 8;
    }
    pair = alloc_pair(fg, bg);
    return pair < 0 ? 0 : pair;
}

static attr_t
attrs_for(const struct screen *s, const struct grid *g, const struct cell *c)
{
    int a = grid_cell_attrs(g, c, s->depth);
    attr_t out = A_NORMAL;

    if (a & ATTR_BOLD)
        out |= A_BOLD;
    if (a & ATTR_REVERSE)
        out |= A_REVERSE;
    if (a & ATTR_UNDERLINE)
        out |= A_UNDERLINE;
    if (a & ATTR_DIM)
        out |= A_DIM;
    return out;
}

/* Copies the frame into curses' buffer; curses sends only what changed. */
static void
blit(const struct screen *s, const struct grid *g)
{
    for (int y = 0; y < g->height && y < LINES; y++) {
        for (int x = 0; x < g->width && x < COLS; x++) {
            const struct cell *c = grid_at(g, x, y);
            wchar_t wc[2] = { 0, 0 };
            cchar_t cc;
            int pair;
            if (c->ch == GRID_CONTINUATION)
                continue;
            wc[0] = (wchar_t)c->ch;
            if (!s->utf8 && c->ch > 0x7E)
                wc[0] = L'?';
            pair = pair_for(s, c);
            setcchar(&cc, wc, attrs_for(s, g, c), 0, &pair);
            mvwadd_wch(stdscr, y, x, &cc);
        }
    }
}

/*
 * The sequences other terminals send for the keys attnscope uses, whatever
 * TERM says: TERM=xterm-256color inside tmux or screen gets ESC[1~ for
 * Home, rxvt sends ESC[7~ and ESC[8~.  Unknown to the terminfo entry, their
 * bytes would arrive one by one and the digits jump to stages.
 */
static void
define_other_keys(void)
{
    static const struct {
        const char *seq;
        int key;
    } keys[] = {
        { "\033[1~", KEY_HOME }, { "\033[7~", KEY_HOME }, { "\033[H", KEY_HOME },
        { "\033OH", KEY_HOME },  { "\033[4~", KEY_END },  { "\033[8~", KEY_END },
        { "\033[F", KEY_END },   { "\033OF", KEY_END },   { "\033[5~", KEY_PPAGE },
        { "\033[6~", KEY_NPAGE }, { "\033[3~", KEY_DC },   { "\033[A", KEY_UP },
        { "\033[B", KEY_DOWN },  { "\033[C", KEY_RIGHT }, { "\033[D", KEY_LEFT },
        { "\033OA", KEY_UP },    { "\033OB", KEY_DOWN },  { "\033OC", KEY_RIGHT },
        { "\033OD", KEY_LEFT },  { "\033[Z", KEY_BTAB },
    };

    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (key_defined(keys[i].seq) == 0)
            define_key(keys[i].seq, keys[i].key);
}

/*
 * After an ESC: if a control sequence follows (ESC [ or ESC O, already in
 * the input, as a terminal sends it at once), reads it to its final byte
 * and returns true: a key attnscope does not know is dropped whole, never
 * read as the characters it is made of.  Otherwise puts back what it read
 * and returns false: the ESC is the Esc key.
 */
static bool
swallow_sequence(void)
{
    wint_t ch;
    int status;

    wtimeout(stdscr, 0);
    status = wget_wch(stdscr, &ch);
    if (status == ERR)
        return false;
    if (status != OK || (ch != '[' && ch != 'O')) {
        /* (put back whatever came: a function key too, an arrow pressed right after Esc) */
        if (status == OK)
            unget_wch((wchar_t)ch);
        else if (status == KEY_CODE_YES)
            ungetch((int)ch);
        return false;
    }
    /* Parameters and intermediates (0x20-0x3F), then one final byte (0x40-0x7E). */
    for (int n = 0; n < 32; n++) {
        status = wget_wch(stdscr, &ch);
        if (status != OK || (ch >= 0x40 && ch <= 0x7E))
            break;
    }
    return true;
}

static int
translate_key(int status, wint_t ch)
{
    if (status == KEY_CODE_YES) {
        switch (ch) {
        case KEY_UP:
            return APP_KEY_UP;
        case KEY_DOWN:
            return APP_KEY_DOWN;
        case KEY_LEFT:
            return APP_KEY_LEFT;
        case KEY_RIGHT:
            return APP_KEY_RIGHT;
        case KEY_HOME:
        case KEY_FIND:   /* rxvt's entry names ESC[1~, tmux's Home, Find */
            return APP_KEY_HOME;
        case KEY_END:
        case KEY_SELECT: /* and ESC[4~, tmux's End, Select */
            return APP_KEY_END;
        case KEY_PPAGE:
            return APP_KEY_PAGE_UP;
        case KEY_NPAGE:
            return APP_KEY_PAGE_DOWN;
        case KEY_BACKSPACE:
            return APP_KEY_BACKSPACE;
        case KEY_DC:
            return APP_KEY_DELETE;
        case KEY_ENTER:
            return APP_KEY_ENTER;
        case KEY_BTAB:
            return APP_KEY_BACKTAB;
        default:
            return -1;
        }
    }
    switch (ch) {
    case '\n':
    case '\r':
        return APP_KEY_ENTER;
    case 27:
        return APP_KEY_ESCAPE;
    case '\t':
        return APP_KEY_TAB;
    case 127:
    case 8:
        return APP_KEY_BACKSPACE;
    default:
        return (int)ch;
    }
}

static void
choose_depth(struct screen *s, bool mono)
{
    s->depth = DEPTH_MONO;
    if (mono || terminal_env_set("NO_COLOR") || !has_colors())
        return;
    start_color();
    use_default_colors();
    /*
     * A direct-colour entry (xterm-direct, or the one COLORTERM chose)
     * takes colours as 0xRRGGBB: palette indexes would be shades of blue.
     */
    if (COLORS >= 0x1000000)
        s->depth = DEPTH_DIRECT;
    else if (COLORS >= 256)
        s->depth = DEPTH_256;
    else if (COLORS >= 8)
        s->depth = DEPTH_8;
}

struct tui {
    struct screen s;
    struct grid g;
    SCREEN *scr;
};

struct tui *
tui_open(FILE *out, FILE *in, bool mono, struct app *a, struct attn_error *err)
{
    struct tui *t = calloc(1, sizeof *t);
    char direct_buf[128];
    const char *direct;
    const char *codeset;

    if (t == NULL) {
        attn_fail(err, ATTN_ENOMEM, "out of memory");
        return NULL;
    }
    /* Only the character type: numbers keep the C locale's decimal point. */
    setlocale(LC_CTYPE, "");
    codeset = nl_langinfo(CODESET);
    t->s.utf8 = codeset != NULL && strcmp(codeset, "UTF-8") == 0;
    a->view.utf8 = t->s.utf8;

    direct = terminal_direct(direct_buf, sizeof direct_buf);
    terminal_begin(in, out);
    errno = 0;
    t->scr = newterm(direct, out, in);
    if (t->scr == NULL && direct != NULL && errno != ENOMEM)
        t->scr = newterm(NULL, out, in);
    if (t->scr == NULL) {
        struct winsize ws;
        const bool no_memory = errno == ENOMEM;
        free(t);
        /* curses keeps a few copies of the whole screen: a huge window can exhaust memory. */
        if (no_memory && ioctl(fileno(out), TIOCGWINSZ, &ws) == 0)
            attn_fail(err, ATTN_ENOMEM,
                      "out of memory for a terminal of %u x %u characters; use a smaller window "
                      "or --print",
                      (unsigned)ws.ws_col, (unsigned)ws.ws_row);
        else if (no_memory)
            attn_fail(err, ATTN_ENOMEM, "out of memory setting up the terminal; use --print");
        else
            attn_fail(err, ATTN_EIO, "cannot use the terminal '%s'; try TERM=xterm or --print",
                      getenv("TERM") ? getenv("TERM") : "(unset)");
        return NULL;
    }
    {
        /* A terminal that cannot put the cursor anywhere (TERM=dumb) cannot show a view. */
        char *cup = tigetstr("cup");
        if (cup == NULL || cup == (char *)-1) {
            endwin();
            delscreen(t->scr);
            free(t);
            attn_fail(err, ATTN_EIO,
                      "the terminal '%s' cannot move the cursor; use --print or --export DIR, "
                      "or a terminal such as TERM=xterm",
                      getenv("TERM") ? getenv("TERM") : "(unset)");
            return NULL;
        }
    }
    terminal_started();
    cbreak();
    noecho();
    nonl();
    terminal_no_flow_control();
    keypad(stdscr, TRUE);
    set_escdelay(25);
    curs_set(0);
    mousemask(BUTTON1_PRESSED | BUTTON1_CLICKED, NULL);
    mouseinterval(0);
    define_key(terminal_cap("PS", "\033[200~"), TUI_KEY_PASTE_BEGIN);
    define_key(terminal_cap("PE", "\033[201~"), TUI_KEY_PASTE_END);
    define_other_keys();
    terminal_paste_mode(true);
    terminal_crash_bytes();
    /* ncurses reports a resize only when a read returns: keep reads short. */
    wtimeout(stdscr, TUI_READ_MS);
    choose_depth(&t->s, mono);
    a->view.colour = t->s.depth != DEPTH_MONO;
    if (grid_create(&t->g, COLS, LINES) != 0) {
        tui_close(t);
        attn_fail(err, ATTN_ENOMEM, "out of memory for a %dx%d screen", COLS, LINES);
        return NULL;
    }
    return t;
}

int
tui_frame(struct tui *t, struct app *a)
{
    if (t->g.width != COLS || t->g.height != LINES) {
        grid_destroy(&t->g);
        if (grid_create(&t->g, COLS, LINES) != 0)
            return -1;
    }
    app_render(a, &t->g);
    blit(&t->s, &t->g);
    wnoutrefresh(stdscr);
    doupdate();
    return 0;
}

void
tui_close(struct tui *t)
{
    if (t == NULL)
        return;
    grid_destroy(&t->g);
    terminal_restore();
    if (t->scr != NULL)
        delscreen(t->scr);
    free(t);
}

/* The busy line: what the app's thread is doing, how far it is, and how to stop it. */
static void
draw_busy(void)
{
    long done;
    long total;
    const char *what = progress_now(&done, &total);
    char line[200];

    if (what != NULL && total > 1)
        snprintf(line, sizeof line, " %s: %ld of %ld. Esc stops, q stops and quits ", what, done,
                 total);
    else
        snprintf(line, sizeof line, " %s. Esc stops, q stops and quits ",
                 what != NULL ? what : "working");
    attron(A_REVERSE);
    mvaddnstr(LINES - 1, 0, line, COLS);
    attroff(A_REVERSE);
    clrtoeol();
    wnoutrefresh(stdscr);
    doupdate();
}

/* Keys typed while a job ran, given back to the input in order once it is done. */
#define TUI_HELD_KEYS 64
struct held_key {
    int status;
    wint_t ch;
};

static void
give_back(const struct held_key *held, int count)
{
    /* (ncurses reads what is pushed back last first: pushed from the last key typed) */
    for (int i = count - 1; i >= 0; i--) {
        if (held[i].status == KEY_CODE_YES)
            (void)ungetch((int)held[i].ch);
        else
            (void)unget_wch((wchar_t)held[i].ch);
    }
}

/*
 * Hands job to the app, on the worker's thread when there is one.  While
 * it runs past a read's wait the busy line is kept up to date and keys are
 * read: Esc and a signal ask the core to stop (progress_stop()), q does
 * and quits once the job is back.  Other keys pressed meanwhile are kept
 * and handled after it, in order (four Spaces on a slow model's lesson are
 * four steps); a click is dropped, its screen about to change.
 */
static void
dispatch(struct worker *w, struct app *a, const struct worker_job *job)
{
    bool quit = false;
    bool stopped = false;
    struct held_key held[TUI_HELD_KEYS];
    int held_count = 0;

    /* (read before the worker runs: the job may change it) */
    const bool writing = app_writing(a);

    progress_reset();
    if (w == NULL) {
        worker_run(a, job);
        return;
    }
    worker_post(w, job);
    while (!worker_wait(w, TUI_READ_MS)) {
        wint_t ch;
        int status;
        if (terminal_signal() == SIGINT && writing) {
            /* Ctrl-C while the view writes stops the writing, not attnscope */
            terminal_signal_clear();
            progress_stop();
            stopped = true;
        } else if (terminal_signal()) {
            progress_stop();
            stopped = true;
        }
        draw_busy();
        wtimeout(stdscr, 0);
        status = wget_wch(stdscr, &ch);
        if (status == OK && (ch == 'q' || ch == 'Q')) {
            quit = true;
            progress_stop();
        } else if (status == OK && ch == 27) {
            progress_stop();
            stopped = true;
        } else if (status == KEY_CODE_YES && ch == KEY_MOUSE) {
            MEVENT ev;
            (void)getmouse(&ev); /* (a click at a screen about to change: dropped) */
        } else if (status != ERR && held_count < TUI_HELD_KEYS) {
            held[held_count].status = status;
            held[held_count++].ch = ch;
        }
    }
    if (!quit)
        give_back(held, held_count);
    progress_reset();
    if (stopped || quit)
        app_stopped(a); /* (A's writing stops with the job; what was written stays) */
    if (quit)
        a->quit = true;
}

/*
 * Reads a paste up to its end mark (or TUI_PASTE_GAP_MS of silence) and
 * hands it to the app as text.  Returns false if the terminal went away.
 */
static bool
read_paste(struct worker *w, struct app *a)
{
    /* No more than the editor could take, plus a little to be refused with a message. */
    const size_t limit = (size_t)TOKENIZER_MAX_BYTES + 8;
    char *buf = NULL;
    size_t len = 0;
    size_t cap = 0;
    bool alive = true;

    wtimeout(stdscr, TUI_PASTE_GAP_MS);
    for (;;) {
        wint_t ch;
        char piece[8];
        int n;
        int status = wget_wch(stdscr, &ch);
        if (status == ERR) {
            alive = !terminal_gone();
            break;
        }
        if (status == KEY_CODE_YES && ch == TUI_KEY_PASTE_END)
            break;
        if (status == KEY_CODE_YES && ch != KEY_ENTER)
            continue; /* a key code inside a paste: no text */
        n = status == KEY_CODE_YES ? (piece[0] = '\n', 1) : utf8_encode((uint32_t)ch, piece);
        if (len + (size_t)n > limit)
            continue; /* drained, not kept */
        if (len + (size_t)n > cap) {
            size_t bigger = cap ? cap * 2 : 256;
            char *grown = realloc(buf, bigger);
            if (grown == NULL)
                continue;
            buf = grown;
            cap = bigger;
        }
        memcpy(buf + len, piece, (size_t)n);
        len += (size_t)n;
    }
    {
        struct worker_job job = { WORKER_PASTE, 0, 0, 0, buf != NULL ? buf : "", len };
        dispatch(w, a, &job);
    }
    free(buf);
    return alive;
}

/*
 * For tests that wait for a state, not a time: with ATTNSCOPE_KEYLOG=FILE,
 * after every frame FILE holds the number of keys read before it was drawn
 * (resizes and mouse events not counted); "size W H", the screen that frame
 * was drawn for; "last key N" or "last char N", the last key read before it
 * (a function key's curses code, a character's); and "settled" once the
 * app's work between keys is done (the view's weights packed and taken
 * over).  tests/tmuxlib.sh waits for the count of the keys it sent, for a
 * size after a resize, and for a last key no other sends (F12: after a
 * flood of keys, every one of them read); the benchmark's edits wait to be
 * settled.
 */
struct keylog {
    unsigned long keys;
    int width, height;
    bool function; /* the last key a function key's code (KEY_CODE_YES), else a character */
    unsigned long last;
};

static void
log_keys(const char *path, const struct keylog *k, bool settled)
{
    char text[128];
    int n = snprintf(text, sizeof text, "%lu\nsize %d %d\nlast %s %lu\n%s", k->keys, k->width,
                     k->height, k->function ? "key" : "char", k->last, settled ? "settled\n" : "");
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

    if (fd < 0)
        return;
    if (write(fd, text, (size_t)n) != n) {
        /* Nothing to do: the test waiting for it will say what it saw. */
    }
    close(fd);
}

/*
 * What was read (wget_wch's status and character) handed to the app: a
 * paste as text, a resize, a click, an escape sequence swallowed, or a
 * key.  False when the terminal went away during a paste.
 */
static bool
take_input(struct worker *worker, struct app *a, int status, wint_t ch)
{
    if (status == KEY_CODE_YES && ch == TUI_KEY_PASTE_BEGIN)
        return read_paste(worker, a);
    if (status == KEY_CODE_YES && ch == KEY_RESIZE) {
        werase(stdscr);
        return true;
    }
    if (status == KEY_CODE_YES && ch == KEY_MOUSE) {
        MEVENT ev;
        if (getmouse(&ev) == OK) {
            struct worker_job job = { WORKER_CLICK, 0, ev.x, ev.y, NULL, 0 };
            dispatch(worker, a, &job);
        }
        return true;
    }
    if (status == OK && ch == 27 && swallow_sequence())
        return true;
    {
        int key = translate_key(status, ch);
        if (key >= 0) {
            struct worker_job job = { WORKER_KEY, key, 0, 0, NULL, 0 };
            dispatch(worker, a, &job);
        }
    }
    return true;
}

enum attn_status
tui_run(struct app *a, bool mono, struct attn_error *err)
{
    struct tui *t;
    bool dirty = true; /* keys were handled since the last frame */
    bool idle = true;  /* the last read found no key waiting */
    int batch = 0;     /* keys handled since the last frame */
    bool gone = false; /* the terminal went away */
    const char *keylog = getenv("ATTNSCOPE_KEYLOG");
    int no_frame_w = 0; /* the screen size no frame could be made for */
    int no_frame_h = 0;
    unsigned long keys_read = 0;
    struct keylog framed = { 0 }; /* the keys read when the last frame was drawn */
    bool last_function = false;
    unsigned long last_key = 0;
    bool settled = false; /* the app's work between keys is done (a->idle said so) */
    struct worker *worker;

    if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO))
        return attn_fail(err, ATTN_EIO,
                         "the interactive view needs a terminal on stdin and stdout; "
                         "use --print to see the stages as text or --export DIR for CSV files");
    t = tui_open(stdout, stdin, mono, a, err);
    if (t == NULL)
        return err != NULL ? err->status : ATTN_EIO;
    atexit(terminal_restore);
    terminal_catch_signals();
    worker = worker_start(a);
    while (!a->quit) {
        wint_t ch;
        int status;
        if (terminal_signal() == SIGINT && app_writing(a)) {
            /* Ctrl-C while the view writes (A, --generate): the writing stops, the view stays */
            terminal_signal_clear();
            app_stopped(a);
            dirty = true;
        }
        if (terminal_signal())
            break;
        if (terminal_take_resumed())
            terminal_paste_mode(true);
        /*
         * Keys already waiting (a paste, a held key) are handled before the
         * next frame, up to TUI_KEYS_PER_FRAME of them: a burst costs one
         * frame, and the screen still follows a steady stream.
         */
        if (dirty && (idle || batch >= TUI_KEYS_PER_FRAME)) {
            if (tui_frame(t, a) != 0) {
                /* A resize to more than a frame can hold: say so after leaving, not just leave. */
                no_frame_w = COLS;
                no_frame_h = LINES;
                break;
            }
            dirty = false;
            batch = 0;
            framed = (struct keylog){ keys_read, COLS, LINES, last_function, last_key };
            if (keylog != NULL)
                log_keys(keylog, &framed, settled);
        }
        wtimeout(stdscr, dirty || a->writing_on ? 0 : TUI_READ_MS);
        status = wget_wch(stdscr, &ch);
        idle = status == ERR;
        if (idle) {
            /* ERR is a timeout, or a terminal that is gone without a SIGHUP: stop then. */
            if (terminal_gone()) {
                gone = true;
                break;
            }
            if (a->idle != NULL && a->idle(a->idle_ctx) && !settled) {
                settled = true;
                if (keylog != NULL) /* (the keys of the last frame drawn: a frame may be due) */
                    log_keys(keylog, &framed, settled);
            }
            if (a->writing_on && !dirty) {
                /* A keeps writing: a token, then its frame, while no key waits. */
                struct worker_job job = { WORKER_KEY, APP_KEY_WRITE_MORE, 0, 0, NULL, 0 };
                dispatch(worker, a, &job);
                dirty = true;
            }
            continue;
        }
        dirty = true;
        batch++;
        if (!(status == KEY_CODE_YES && (ch == KEY_RESIZE || ch == KEY_MOUSE))) {
            keys_read++;
            last_function = status == KEY_CODE_YES;
            last_key = (unsigned long)ch;
        }
        /* (keys that come faster than TUI_READ_MS never leave the view idle) */
        if (a->idle != NULL)
            settled = a->idle(a->idle_ctx) || settled;
        if (!take_input(worker, a, status, ch)) {
            gone = true;
            break;
        }
    }
    worker_stop(worker);
    tui_close(t);
    if (terminal_signal()) {
        /* The terminal is back; now die of the signal as the sender expects. */
        int sig = terminal_signal();
        signal(sig, SIG_DFL);
        raise(sig);
    }
    if (gone)
        return attn_fail(err, ATTN_EIO, "the terminal went away");
    if (no_frame_w > 0)
        return attn_fail(err, ATTN_ENOMEM,
                         "cannot draw a %d x %d screen (out of memory, or past %zu cells)", no_frame_w,
                         no_frame_h, GRID_MAX_CELLS);
    return ATTN_OK;
}
