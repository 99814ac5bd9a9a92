#!/bin/sh
# valgrind.sh: Valgrind's memcheck over --print, --export, --weights,
# --qkv, a walkthrough handout, error paths, and a scripted session of the
# interactive view in tmux: no invalid read or write, no use of an
# uninitialised value, and no leak of any kind (still-reachable blocks
# count too), but for ncurses' terminfo cache (tests/valgrind.supp).
# Skips (77) when valgrind or tmux is not installed, and in the
# --enable-sanitizers build.

command -v valgrind >/dev/null 2>&1 || { echo "valgrind is not installed: skipping"; exit 77; }
name=valgrind
. "${top_srcdir:-.}/tests/tmuxlib.sh"
# AddressSanitizer and Valgrind cannot watch the same program; that build has ASan.
if grep -q __asan_init "$bin"; then
    echo "attnscope is built with --enable-sanitizers: skipping (ASan checks this build)"
    exit 77
fi

vg="valgrind --leak-check=full --show-leak-kinds=all --errors-for-leak-kinds=all --error-exitcode=99"
vg="$vg --suppressions=$srcdir/tests/valgrind.supp --log-file=$tmp/vg.%p.log"

# run CODE ARGS...: attnscope under memcheck exits CODE (99: memcheck found something).
run() {
    code=$1
    shift
    checks=$((checks + 1))
    rm -f "$tmp"/vg.*.log
    $vg "$bin" "$@" >/dev/null 2>"$tmp/err"
    got=$?
    if [ "$got" -ne "$code" ]; then
        fail "attnscope $*: exit $got, expected $code: $(cat "$tmp/err")"
        cat "$tmp"/vg.*.log
    fi
}

run 0 --print
run 0 --print --heatmap --stage weights --format markdown
run 0 --export "$tmp/x" --d-out 8 --heads 2 --dropout 0.3 --dropout-seed 5 --qkv-bias --positional -s "Hello shiny sun!"
run 0 --print --weights "$tmp/x" --d-out 8 --heads 2 --qkv-bias --positional -s "Hello shiny sun!" --format latex
run 0 --print --variant wrapper --heads 3 --d-out 2 --rng mkl --dropout 0.5 -e "$srcdir/samples/dry-run-6d.csv"
run 0 --print --qkv "$srcdir/samples/soft-dictionary" --scale-dim 4
run 0 --print --walkthrough "$srcdir/samples/walkthroughs/04-multi-head.walk"
run 0 --figure "$tmp/f.png" --stage weights --view grid
run 0 --figure "$tmp/f.svg" --model "$srcdir/tests/fixtures/gpt2/tiny" -s "the cat sat" --view map
printf 'token,d0\nsun,1\nmoon,x\n' >"$tmp/bad.csv"
run 1 --print -e "$tmp/bad.csv"
run 1 --print --weights "$tmp/nothing"
run 2 --print --heads 3 --d-out 4
run 1 --export "$tmp/bad.csv"

# A session of the interactive view: every kind of key, a resize, a walkthrough.
WRAP="$vg" start 100 30
keys 1 Space Space Space 6 Down Right Tab g g M M e C-w
keys -l " giant leap"
keys Enter v d h s o o t / ">" P k b x X "?" Escape z z w Down Enter Space Space Enter
screen >/dev/null
resize 60 20
resize 100 30
keys q
wait_exit 200
restored "the interactive view under memcheck" 0
[ "$(cat "$tmp/rc" 2>/dev/null)" = 0 ] || cat "$tmp"/vg.*.log

echo "$checks checks, $failures failed"
[ "$failures" -eq 0 ]
