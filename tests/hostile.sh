#!/bin/sh
# hostile.sh: attnscope in the terminals a classroom has.  Tiny windows,
# windows resized many times a second, vt100 and the Linux console, an
# unknown or missing TERM, NO_COLOR, LANG=C, stdin closed, Ctrl-Z and fg in
# a job-control shell, and signals at any moment: attnscope never crashes,
# and the terminal always comes back as it was (tests/tmuxlib.sh compares
# `stty -g` before and after, and that nothing of the view stays on screen).

name=hostile
. "${top_srcdir:-.}/tests/tmuxlib.sh"

book="sentence: Your journey starts with one step"

# alive WHAT: this scenario's attnscope is still running.
alive() {
    checks=$((checks + 1))
    pane_attnscope >/dev/null || fail "$1: attnscope is gone"
}

# shows WHAT TEXT: the screen holds TEXT.
shows() {
    checks=$((checks + 1))
    # The state first (a start-up line may hold the screen still before the view draws).
    wait_text "$2" 200 || true
    screen >"$tmp/screen"
    grep -qF -- "$2" "$tmp/screen" || fail "$1: the screen lacks '$2': $(head -5 "$tmp/screen")"
}

# 1. Tiny windows: a message, keys ignored (nothing can be seen), q quits.
for size in 1x1 2x2 12x4 20x8 40x10 49x15; do
    READY="" start "${size%x*}" "${size#*x}"
    keys Space Down g e x Enter Tab M z ?
    alive "$size"
    [ "${size%x*}" -ge 21 ] && shows "$size" "attnscope needs 50x16"
    resize 100 30
    shows "$size, then 100x30" "$book"
    shows "$size, then 100x30: the keys typed blind were ignored" "Tokens and embeddings (6 x 3)"
    resize "${size%x*}" "${size#*x}"
    keys q
    restored "$size" 0
done

# 2. Resized hundreds of times, as fast as tmux can, with keys in between.
start 100 30
i=0
while [ $i -lt 300 ]; do
    t resize-window -x $((1 + (i * 37) % 160)) -y $((1 + (i * 11) % 50))
    [ $((i % 10)) -eq 0 ] && keys Right Down Tab
    i=$((i + 1))
done
alive "300 resizes"
resize 100 30
shows "300 resizes, then 100x30" "$book"
keys q
restored "300 resizes" 0

# 3. Terminals without colour, an alternate screen or a mouse.
# (On the console, ncurses' GPM mouse support leaks 10 bytes: tests/lsan.supp.)
gpm="ASAN_OPTIONS=fast_unwind_on_malloc=0 LSAN_OPTIONS=suppressions=$srcdir/tests/lsan.supp"
for term in vt100 linux; do
    TUI_ENV="LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=$term $gpm" start 80 24
    shows "TERM=$term" "$book"
    keys 6 Down Right g
    alive "TERM=$term"
    keys q
    restored "TERM=$term" 0
done

# 4. LANG=C: nothing but ASCII on the screen.
TUI_ENV="LANG=C LC_ALL=C TERM=screen-256color" start 100 30
keys 6 Down Right
shows "LANG=C" "$book"
checks=$((checks + 1))
[ "$(LC_ALL=C tr -d '\n -~' <"$tmp/screen" | wc -c)" -eq 0 ] || fail "LANG=C: bytes beyond ASCII on the screen"
keys q
restored "LANG=C" 0

# 5. NO_COLOR and --mono: attributes (bold, reverse), never a colour.
# colours FILE: the SGR colour parameters (30-49, 90-107, but 39 and 49, the defaults) in FILE.
colours() {
    LC_ALL=C grep -o "$(printf '\033')\[[0-9;]*m" "$1" | tr -d 'm\033[' | tr ';' '\n' |
        awk '$1 != "" && $1 != 39 && $1 != 49 && (($1 >= 30 && $1 <= 48) || ($1 >= 90 && $1 <= 107))' | wc -l
}
# The last case, a colour screen, must count colours, or the check could not fail.
for how in NO_COLOR --mono colour; do
    case $how in
    NO_COLOR) TUI_ENV="LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=screen-256color NO_COLOR=1" start 100 30 ;;
    --mono) start 100 30 --mono ;;
    colour) start 100 30 ;;
    esac
    keys 6
    screen >/dev/null
    t capture-pane -p -e >"$tmp/styled"
    checks=$((checks + 1))
    if [ $how = colour ]; then
        [ "$(colours "$tmp/styled")" -gt 0 ] || fail "the colour check finds no colour on a colour screen"
    else
        [ "$(colours "$tmp/styled")" -eq 0 ] || fail "$how: colours on the screen"
    fi
    keys q
    restored "$how" 0
done

# 6. A terminal attnscope cannot use: a message, exit 1, the terminal untouched.
for env in "TERM=no-such-terminal" "TERM=" "TERM=dumb"; do
    READY="attnscope:" TUI_ENV="LANG=C.UTF-8 $env" start 100 30
    shows "$env" "attnscope: "
    restored "$env" 1
done
READY="attnscope:" start 100 30 "<&-"
shows "stdin closed" "needs a terminal on stdin and stdout"
restored "stdin closed" 1
READY="attnscope:" start 100 30 ">$tmp/out.txt"
restored "stdout into a file" 1
checks=$((checks + 1))
[ ! -s "$tmp/out.txt" ] || fail "stdout into a file: something was written to it"

# 7. Ctrl-Z in a job-control shell: the terminal is the shell's while
# attnscope is stopped, and fg brings the view back.
scenario=$((scenario + 1))
sock="$base-$scenario"
t new -d -x 100 -y 30 -c "$tmp" \
    "env -i PATH=/usr/bin:/bin HOME=$tmp LANG=C.UTF-8 TERM=screen-256color PS1='ready\$ ' bash --norc --noprofile -i"
wait_screen 'ready\$'
keys "stty -g >$tmp/before; \"$bin\"" Enter
shows "before Ctrl-Z" "$book"
keys C-z
shows "Ctrl-Z" "Stopped"
keys "stty -g >$tmp/stopped; fg" Enter
shows "fg" "$book"
keys 6
shows "keys after fg" "Attention weights"
# bash turns bracketed paste off to run fg: attnscope turns it back on when continued.
t set-buffer "after fg"
t paste-buffer -p
shows "a paste after fg" "sentence: after fg"
keys Escape q
# The shell's turn only once attnscope has gone (typed before, the command
# would reach attnscope or a terminal it has not restored yet).
i=0
while [ $i -lt 600 ] && [ "$(t display -p '#{pane_current_command}')" != bash ]; do
    sleep 0.05
    i=$((i + 1))
done
keys "stty -g >$tmp/after" Enter
wait_exit
checks=$((checks + 1))
cmp -s "$tmp/before" "$tmp/stopped" || fail "Ctrl-Z: the terminal was not restored while stopped"
cmp -s "$tmp/before" "$tmp/after" || fail "Ctrl-Z, fg, q: the terminal settings changed"

# 8. Signals at any moment: during start-up, while editing, in the help,
# in the middle of a walkthrough.
n=0
for moment in start-up editing help walkthrough; do
    for sig in TERM INT HUP; do
        n=$((n + 1))
        case $moment in
        start-up) READY="" start 100 30 ;;
        walkthrough) start 100 30 --walkthrough 03-causal-and-dropout ;;
        *) start 100 30 ;;
        esac
        case $moment in
        editing) keys e C-w ;;
        help) keys ? ;;
        walkthrough) keys Space Space ;;
        esac
        i=0
        while [ $i -lt 100 ] && ! signal_attnscope "$sig" 2>/dev/null; do sleep 0.01; i=$((i + 1)); done
        case $sig in TERM) code=143 ;; INT) code=130 ;; HUP) code=129 ;; esac
        restored "SIG$sig during $moment" "$code"
    done
done

# 9. Every other signal that ends a process by default restores the terminal
# too (before, SIGQUIT from Ctrl-\\ left it without echo; issue 35: SIGXCPU,
# which ulimit -t sends, SIGIO, SIGPWR, SIGSYS, SIGSTKFLT and the real-time
# signals left it raw), and the exit status still names the signal.  The
# faults (SEGV, BUS, FPE, ILL, ABRT, TRAP) are restored from their handler,
# as a crash must be; no core file is written (ulimit -c 0).
ulimit -c 0
for pair in QUIT:3 USR1:10 USR2:12 ALRM:14 PIPE:13 VTALRM:26 PROF:27 XCPU:24 IO:29 PWR:30 SYS:31 STKFLT:16 34:34 64:64 SEGV:11 BUS:7 FPE:8 ILL:4 ABRT:6 TRAP:5; do
    sig=${pair%:*}
    start 100 30
    signal_attnscope "$sig"
    restored "SIG$sig" "$((128 + ${pair#*:}))"
done

# 10. Ctrl-S does not freeze the view (flow control is off): the next key
# still draws its stage.
start 100 30
keys C-s 3
checks=$((checks + 1))
wait_screen "^Attention scores" || fail "after Ctrl-S the view no longer answers: $(screen | head -5)"
keys C-q q
restored "Ctrl-S, Ctrl-Q, q" 0

# 11. The terminal goes away without a SIGHUP (attnscope in a session of its
# own, then the tmux server killed): attnscope notices and exits instead of
# spinning on failed reads (before: 100 % CPU forever).
WRAP=setsid start 100 30
checks=$((checks + 1))
pid=$(pane_attnscope)
t kill-server
i=0
while [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && [ $i -lt 400 ]; do
    sleep 0.05
    i=$((i + 1))
done
if [ -z "$pid" ]; then
    fail "terminal gone: attnscope was not found under setsid"
elif kill -0 "$pid" 2>/dev/null; then
    fail "terminal gone: attnscope still runs (state $(awk '{ print $3 }' "/proc/$pid/stat"))"
    kill -9 "$pid"
fi

# 12. A FIFO named like a lesson in the lessons folder: the picker lists the
# real lessons instead of waiting forever in open() for a writer.
mkdir -p "$tmp/walks"
cp "$srcdir/samples/walkthroughs/01-no-weights.walk" "$tmp/walks/"
rm -f "$tmp/walks/00-fifo.walk"
mkfifo "$tmp/walks/00-fifo.walk"
WALKS="$tmp/walks" start 100 30
keys w
checks=$((checks + 1))
wait_screen "$(sed -n 's/^title: //p' "$tmp/walks/01-no-weights.walk" | head -1)" ||
    fail "a FIFO in the lessons folder: no picker: $(screen | head -5)"
keys Escape q
restored "a FIFO in the lessons folder" 0

# 13. A window too large for the memory attnscope may use (curses keeps
# copies of the whole screen): it says so, not "cannot use the terminal".
# The sanitizer build reserves terabytes of address space, so an address
# space limit cannot be set under it.
if ! grep -q __asan_init "$bin"; then
    WRAP="prlimit --as=400000000" READY="out of memory" start 3000 3000
    shows "a 3000 x 3000 window" "out of memory for a terminal of 3000 x 3000 characters"
    restored "a 3000 x 3000 window" 1
fi

# 14. A paste is text, never keys (bracketed paste): "hello world", a line
# end, then "Xq" lands in the editor instead of exporting and quitting;
# after q the terminal is out of paste mode (what is pasted then reaches
# the shell's next command without the marks).
scenario=$((scenario + 1))
sock="$base-$scenario"
t new -d -x 100 -y 30 -c "$tmp" \
    "env LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=screen-256color sh -c '\"$bin\"; echo done >$tmp/rc; cat >$tmp/pasted'"
wait_screen "sentence:"
t set-buffer "$(printf 'hello world\nXq')"
t paste-buffer -p
shows "a paste" "sentence: hello world Xq"
shows "a paste" "pasted 14 bytes"
keys Enter
shows "a paste applied" "(3 tokens"
checks=$((checks + 1))
[ ! -e "$tmp/attnscope-export" ] || fail "a paste: its x exported"
keys q
i=0
while [ ! -s "$tmp/rc" ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i + 1)); done
t set-buffer after
t paste-buffer -p
keys Enter
i=0
while ! grep -q after "$tmp/pasted" 2>/dev/null && [ $i -lt 400 ]; do sleep 0.05; i=$((i + 1)); done
checks=$((checks + 1))
if ! grep -q after "$tmp/pasted" 2>/dev/null; then
    fail "after q: a paste did not reach the next program"
elif grep -q "$(printf '\033')" "$tmp/pasted"; then
    fail "after q: the terminal is still in bracketed paste mode: $(od -c "$tmp/pasted" | head -2)"
fi

# 15. A lesson is checked step by step as it is played, not all before the
# first frame (200 steps on 4,096 tokens kept the screen blank for minutes,
# q unread): with a wrong number in its last step the view still opens on
# step 1, and reaching the last step says what is wrong there.
printf 'title: Lazy\noptions: --variant simple\n\nstep: one\nstage: weights\n\nfirst {weights[journey][journey]=0.24}\n\nstep: two\nstage: weights\n\nsecond {weights[journey][journey]=0.99}\n' >"$tmp/lazy.walk"
start 100 30 --walkthrough ./lazy.walk
shows "a lesson with a bad last step" "Lazy - step 1 of 2: one"
keys Space
shows "its bad step, reached" ":12: {weights[journey][journey]=0.99}: attnscope computes"
shows "its bad step, reached" "Lazy - step 1 of 2: one"
keys q
restored "a lesson with a bad last step" 0

# 16. A direct-colour terminal (TERM=xterm-direct, Debian's ncurses-term):
# colours go out as 24-bit RGB, the weights' ramp as it is drawn everywhere
# (before: palette indexes sent as RGB made the screen shades of blue), and
# nothing dark turns into one of the 8 themed ANSI colours.
if infocmp xterm-direct >/dev/null 2>&1; then
    TUI_ENV="LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=xterm-direct" start 100 30
    keys 6
    wait_screen "^Attention weights"
    checks=$((checks + 1))
    t capture-pane -e -p >"$tmp/direct"
    # (The cursor is on it: a pointer before the number, the cell's colours kept.)
    grep -q "48;2;253;231;37m   ▸1.0000" "$tmp/direct" ||
        fail "xterm-direct: the top weight is not drawn in the ramp's yellow (253,231,37): $(grep -a 1.0000 "$tmp/direct" | head -1 | cat -v)"
    # Palette indexes (16 to 255) sent as RGB come out as 0,0,N.
    if grep -Eq "[34]8;2;0;0;(1[6-9]|[2-9][0-9]|[12][0-9][0-9])m" "$tmp/direct"; then
        fail "xterm-direct: colours of the form 0,0,N (palette indexes taken as RGB): $(grep -Eo "[34]8;2;0;0;[0-9]+m" "$tmp/direct" | sort -u | head -3)"
    fi
    keys q
    restored "xterm-direct" 0
fi

# 17. Keys as other terminals send them, under a TERM that does not list
# them (TERM=xterm-256color inside tmux gets ESC[1~ for Home; rxvt sends
# ESC[7~ and ESC[8~): Home and End move the cursor, and no digit of an
# escape sequence, known or not, jumps to a stage.
TUI_ENV="LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=xterm-256color" start 100 30
esc=$(printf '\033')
keys 0 Right
wait_screen "out\[Your\]\[1\]"
for seq in "[1~:0" "[8~:1" "[7~:0" "[4~:1" "OH:0" "[15~:0" "[99~:0" "[1;5C:0"; do
    t send-keys -l "$esc${seq%:*}"
    [ "${seq#*:}" = 1 ] && want="out\[Your\]\[1\]" || want="out\[Your\]\[0\]"
    [ "${seq%:*}" = "[15~" ] || [ "${seq%:*}" = "[99~" ] || [ "${seq%:*}" = "[1;5C" ] && keys Home
    checks=$((checks + 1))
    wait_screen "$want" || fail "ESC${seq%:*}: the cursor is not where it should be: $(screen | grep 'out\[')"
    screen | grep -q "^Output projection" || fail "ESC${seq%:*}: the stage changed: $(screen | sed -n 4p)"
done
# Esc and an arrow at once (issue 60: the arrow, read while looking for a sequence after the
# Esc, was lost): the Esc is Esc, the arrow moves the cursor.
t send-keys -l "$esc$esc[C"
checks=$((checks + 1))
wait_screen "out\[Your\]\[1\]" || fail "Esc then Right at once: the Right was lost: $(screen | grep 'out\[')"
keys q
restored "keys of other terminals" 0

# The same inside tmux under TERM=rxvt-unicode-256color, whose entry names
# tmux's Home and End (ESC[1~, ESC[4~) Find and Select: they are Home and End.
if infocmp rxvt-unicode-256color >/dev/null 2>&1; then
    TUI_ENV="LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=rxvt-unicode-256color" start 100 30
    keys 0 Right
    wait_screen "out\[Your\]\[1\]"
    for seq in "[1~:0" "[4~:1"; do
        t send-keys -l "$esc${seq%:*}"
        [ "${seq#*:}" = 1 ] && want="out\[Your\]\[1\]" || want="out\[Your\]\[0\]"
        checks=$((checks + 1))
        wait_screen "$want" || fail "rxvt: ESC${seq%:*}: the cursor is not where it should be: $(screen | grep 'out\[')"
    done
    keys q
    restored "rxvt's Find and Select" 0
fi

echo "$checks checks, $failures failed"
[ "$failures" -eq 0 ]
