# tmuxlib.sh: what the terminal tests (tui.sh, hostile.sh, stress.sh) share.
#
# Sourced, not run.  Each scenario starts attnscope in a private tmux server
# (tmux -L NAME -f /dev/null) whose shell records the terminal settings
# (stty -g) before and after attnscope, and its exit status.  The caller
# sets name (used in temporary names) before sourcing.  Exits 77 (skip) only
# when tmux is not installed.
#
#   TUI_ENV   the environment attnscope runs in (default: a UTF-8 locale and
#             TERM=screen-256color)
#   READY     what start waits for on the screen (default "sentence:")
#   WRAP      a command attnscope runs under (valgrind.sh: valgrind)

set -u
command -v tmux >/dev/null 2>&1 || { echo "tmux is not installed: skipping"; exit 77; }

bin=$(cd "${top_builddir:-.}" && pwd)/attnscope
srcdir=$(cd "${top_srcdir:-.}" && pwd)
golden="${top_srcdir:-.}/tests/golden/screens"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/attnscope-$name-XXXXXX")
base="attnscope-$name-$$"
sock="$base-0"
scenario=0
failures=0
checks=0

t() { tmux -L "$sock" -f /dev/null "$@"; }
# stop_server: ends this scenario's tmux server, and the attnscope in it if
# it outlives its terminal by a second or two: a sanitizer build can spin in
# LeakSanitizer's exit-time check once its terminal is gone (ptrace is not
# permitted here), and would hog a core for every test after it.
stop_server() {
    left=$(pgrep -P "$(t list-panes -F '#{pane_pid}' 2>/dev/null | head -1)" -x attnscope 2>/dev/null)
    t kill-server 2>/dev/null
    [ -n "$left" ] || return 0
    i=0
    while running $left && [ $i -lt 200 ]; do
        sleep 0.01
        i=$((i + 1))
    done
    kill -9 $left 2>/dev/null
    return 0
}
# running PID...: one of them has not exited (a zombie has: its parent, the pane's shell, is
# gone too, and whoever inherits it may take a second or two to reap it).
running() {
    for pid in "$@"; do
        state=$(awk '{ print $3 }' "/proc/$pid/stat" 2>/dev/null)
        [ -n "$state" ] && [ "$state" != Z ] && return 0
    done
    return 1
}
cleanup() { stop_server; rm -rf "$tmp"; }
# Each scenario gets a server of its own: restarting one on the same socket races.
trap cleanup EXIT

fail() {
    echo "FAIL: $*"
    failures=$((failures + 1))
}

# Waits until tmux's copy of the screen stops changing (attnscope has said, by then, that it
# drew the frame: settle), then prints it.
screen() {
    prev=""
    i=0
    while [ $i -lt 300 ]; do
        cur=$(t capture-pane -p 2>/dev/null)
        # (two captures alike, the first compared with the second: a blank screen is stable too)
        if [ $i -gt 0 ] && [ "$cur" = "$prev" ]; then
            printf '%s\n' "$cur"
            return
        fi
        prev=$cur
        sleep 0.01
        i=$((i + 1))
    done
    printf '%s\n' "$prev"
}

# start W H ARGS...: attnscope in a fresh server; the shell around it records
# the terminal settings before and after, and attnscope's exit status.
start() {
    w=$1
    h=$2
    shift 2
    stop_server
    scenario=$((scenario + 1))
    sock="$base-$scenario"
    rm -f "$tmp/before" "$tmp/after" "$tmp/rc" "$tmp/keylog"
    sent=0
    t new -d -x "$w" -y "$h" -c "$tmp" \
        "env ${TUI_ENV:-LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=screen-256color} ATTNSCOPE_WALKTHROUGHS=${WALKS:-$srcdir/samples/walkthroughs} ATTNSCOPE_KEYLOG=$tmp/keylog sh -c 'stty -g > $tmp/before; ${WRAP:-} \"$bin\" $*; echo \$? > $tmp/rc; stty -g > $tmp/after; sleep 30'"
    if [ "${READY-unset}" = "" ]; then
        # (nothing to read on the screen, a window too small to draw in: the first frame is said)
        i=0
        while [ $i -lt 6000 ] && [ ! -s "$tmp/keylog" ] && [ ! -s "$tmp/after" ]; do
            sleep 0.01
            i=$((i + 1))
        done
    else
        wait_screen "${READY:-sentence:}"
    fi
}

# poll_screen WANT PATTERN TRIES: waits until grep PATTERN on the screen exits
# WANT (0: it matches, 1: it does not), checking every 0.01 s, 5 TRIES times
# at most (TRIES counts twentieths of a second); 1 if it never does.
poll_screen() {
    i=0
    while :; do
        t capture-pane -p 2>/dev/null | grep -q ${GREP_F:-} -- "$2"
        [ $? -eq "$1" ] && return 0
        [ $i -ge $(($3 * 5)) ] && return 1
        sleep 0.01
        i=$((i + 1))
    done
}

# wait_screen PATTERN [TRIES]: until the screen matches PATTERN (default 100 tries).
wait_screen() { poll_screen 0 "$1" "${2:-100}"; }

# wait_text TEXT [TRIES]: the same for TEXT as it is (not a pattern: brackets are brackets).
wait_text() { GREP_F=-F poll_screen 0 "$1" "${2:-100}"; }

# wait_gone PATTERN [TRIES]: the opposite, until the screen no longer matches.
wait_gone() { poll_screen 1 "$1" "${2:-100}"; }

# keys KEY...: sends tmux key names (or strings, one key per character) and
# counts them, for settle.
keys() {
    t send-keys "$@"
    literal=0
    for k in "$@"; do
        if [ "$k" = -l ]; then
            literal=1
            continue
        fi
        [ $literal = 1 ] && k="$k:literal"
        case $k in
        *:literal) sent=$((sent + $(printf '%s' "${k%:literal}" | LC_ALL=C.UTF-8 wc -m))) ;;
        Up | Down | Left | Right | Home | End | PPage | NPage | PageUp | PageDown | Space | Enter | \
            Escape | BSpace | BTab | Tab | DC | IC | F[0-9] | F1[0-2] | [CMS]-*) sent=$((sent + 1)) ;;
        *) sent=$((sent + $(printf '%s' "$k" | LC_ALL=C.UTF-8 wc -m))) ;;
        esac
    done
}

# settle: waits until attnscope has drawn a frame after reading every key
# keys sent (ATTNSCOPE_KEYLOG), a state, not a time: 0.02 s checks, for two
# minutes at most (a sanitizer or valgrind build on a loaded machine).
settle() {
    i=0
    while [ $i -lt 6000 ]; do
        [ "$(head -n 1 "$tmp/keylog" 2>/dev/null || echo 0)" -ge "$sent" ] 2>/dev/null && return 0
        # Gone (q, a signal): nothing more will be drawn.
        [ -s "$tmp/after" ] && return 0
        sleep 0.02
        i=$((i + 1))
    done
    fail "attnscope did not read the $sent keys sent (it read $(head -n 1 "$tmp/keylog" 2>/dev/null))"
}

# expect NAME: appends the screen, under a header, to the scenario's capture.
snap() {
    settle
    printf '=== %s\n' "$1" >>"$tmp/capture"
    screen >>"$tmp/capture"
}

# finish NAME: compares the scenario's capture with its golden screen.
finish() {
    checks=$((checks + 1))
    if [ "${GENERATE:-}" = 1 ]; then
        { echo "# attnscope golden screens: tests/tui.sh with GENERATE=1 (tmux capture-pane -p)"; cat "$tmp/capture"; } >"$golden/$1.txt"
    elif ! tail -n +2 "$golden/$1.txt" | cmp -s - "$tmp/capture"; then
        fail "screen $1 differs from $golden/$1.txt:"
        tail -n +2 "$golden/$1.txt" | diff - "$tmp/capture" | head -40
    fi
    rm -f "$tmp/capture"
}

# wait_exit [TRIES]: waits until attnscope has exited and the shell recorded
# the terminal settings, checking every 0.01 s, 5 TRIES times at most (default
# 400, 20 s: a sanitizer build on a loaded machine may take seconds to exit).
wait_exit() {
    i=0
    while [ $i -lt $((${1:-400} * 5)) ] && [ ! -s "$tmp/after" ]; do
        sleep 0.01
        i=$((i + 1))
    done
}

# restored WHAT STATUS [TRIES]: attnscope exits with STATUS within TRIES
# checks (wait_exit) and leaves the terminal settings as they were before it.
restored() {
    checks=$((checks + 1))
    wait_exit "${3:-}"
    if [ ! -s "$tmp/after" ]; then
        # Say what it is doing: its process state, where the kernel has it wait.
        state=""
        running=$(pane_attnscope)
        [ -n "$running" ] && state=" (state $(awk '{ print $3 }' "/proc/$running/stat"), waiting in $(cat "/proc/$running/wchan"))"
        fail "$1: attnscope did not exit$state; the screen:"
        screen
    elif ! cmp -s "$tmp/before" "$tmp/after"; then
        fail "$1: the terminal settings changed: before $(cat "$tmp/before"), after $(cat "$tmp/after")"
    elif [ "$(cat "$tmp/rc")" != "$2" ]; then
        fail "$1: exit status $(cat "$tmp/rc"), expected $2"
    fi
    # Nothing of the interactive view may stay on the screen (alternate screen left).
    if screen | grep -q "sentence:"; then
        fail "$1: the view is still on the screen after exit"
    fi
}

# drained [SECONDS]: sends F12, a key no scenario sends otherwise, and waits until attnscope has
# drawn a frame after reading one (the keylog's "last key 276", KEY_F(12), with more keys read
# than before it): every key queued before it has been read and handled, a state, not a time
# (a flood of keys can merge escapes, so their count is not known).  SECONDS at most (default
# 120); 1 if it never does or is gone.
drained() {
    before=$(head -n 1 "$tmp/keylog" 2>/dev/null || echo 0)
    t send-keys F12
    i=0
    while [ $i -lt $((${1:-120} * 50)) ]; do
        # (an F12 right after a flood's Escapes may be read into an escape sequence of theirs,
        # as a terminal's would: every two seconds another, so one is read as F12)
        [ $i -gt 0 ] && [ $((i % 100)) -eq 0 ] && t send-keys F12
        if grep -qx "last key 276" "$tmp/keylog" 2>/dev/null &&
            [ "$(head -n 1 "$tmp/keylog" 2>/dev/null || echo 0)" -gt "$before" ] 2>/dev/null; then
            sent=$(head -n 1 "$tmp/keylog")
            return 0
        fi
        [ -s "$tmp/after" ] && return 1
        sleep 0.02
        i=$((i + 1))
    done
    return 1
}

# The attnscope of this scenario: the child of the pane's shell.
pane_attnscope() {
    pgrep -P "$(t list-panes -F '#{pane_pid}')" -x attnscope
}

# signal_attnscope SIG: sends SIG to this scenario's attnscope.
signal_attnscope() {
    pkill -"$1" -P "$(t list-panes -F '#{pane_pid}')" -x attnscope
}

# resize W H: resizes this scenario's window and waits until attnscope has drawn a frame of
# that size (the keylog's "size W H"; two minutes at most), or is gone.
resize() {
    t resize-window -x "$1" -y "$2"
    i=0
    while [ $i -lt 6000 ]; do
        grep -qx "size $1 $2" "$tmp/keylog" 2>/dev/null && return 0
        [ -s "$tmp/after" ] && return 0
        sleep 0.02
        i=$((i + 1))
    done
    fail "attnscope drew no frame of $1 x $2 after the resize: $(cat "$tmp/keylog" 2>/dev/null)"
}
